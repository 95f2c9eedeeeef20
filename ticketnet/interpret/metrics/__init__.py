"""How a token score compares with the removal effect: rank agreement, disagreements, ERASER, evidence recovery."""
