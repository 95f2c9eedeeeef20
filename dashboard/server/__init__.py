"""The server around the pages: sessions that left, and what an idle server gives back."""
