"""Turn the hand-written ticket sources (src/*.txt) into tickets.csv: shuffled with a fixed seed, ids BW-0001 on."""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEAMS = ("billing", "network-outage", "equipment", "moving-home", "account-access")
HEADER = re.compile(r"^### (?P<team>[a-z-]+) \| (?P<subject>.+)$")
SEED = 24


def read_source(path: Path) -> list[dict[str, str]]:
    """Tickets of one source file: a '### team | subject' line, then the body up to the next such line."""
    tickets, current = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = HEADER.match(line)
        if match:
            if match["team"] not in TEAMS:
                raise ValueError(f"{path}:{number}: unknown team {match['team']!r}")
            current = {"subject": match["subject"].strip(), "body": [], "team": match["team"]}
            tickets.append(current)
        elif line.startswith("###"):
            raise ValueError(f"{path}:{number}: malformed header {line!r}")
        elif current is not None:
            current["body"].append(line)
        elif line.strip():
            raise ValueError(f"{path}:{number}: text before the first ticket")
    for t in tickets:
        t["body"] = "\n".join(t["body"]).strip()
        if not t["body"]:
            raise ValueError(f"{path}: ticket {t['subject']!r} has no body")
    return tickets


def main() -> None:
    tickets = [t for p in sorted((HERE / "src").glob("*.txt")) for t in read_source(p)]
    random.Random(SEED).shuffle(tickets)
    with open(HERE / "tickets.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
        writer.writerow(["ticket_id", "subject", "body", "team"])
        for i, t in enumerate(tickets, 1):
            writer.writerow([f"BW-{i:04d}", t["subject"], t["body"], t["team"]])
    counts = {team: sum(t["team"] == team for t in tickets) for team in TEAMS}
    print(len(tickets), counts)


if __name__ == "__main__":
    main()
