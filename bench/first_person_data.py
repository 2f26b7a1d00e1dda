"""A first-person variant of a LoCoMo-format file: the questions as the user of the product asks them.

    python -m bench.first_person_data --data ../shared/data/locomo/locomo_dev.json --out /tmp/locomo_dev_1p.json
    python -m bench.first_person_data --data ../shared/data/locomo/locomo_dev.json --out /tmp/locomo_dev_named.json --named

LoCoMo asks about its speakers by name ("What activities does Melanie partake in?"); the product's users ask
about themselves ("What activities do I partake in?", "What do my kids like?"), in turns that carry no name.
Here speaker_a is the user: their turns lose their name (the loader then writes them without a "Name:" prefix,
as the app stores a user's own turns), and every question naming speaker_a and not speaker_b is rewritten in
the first person (``first_person``: "Melanie's" → "my", "does Melanie" → "do I", "with Melanie" → "with me",
"her"/"she" → "my"/"I"); the other questions are left out, so the file measures exactly those. Written from a
file the caller points to (../shared/data is for benchmarks: nothing derived from it is kept in the repo).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from pathlib import Path

_SESSION = re.compile(r"^session_\d+$")
_AUX = {"does": "do", "has": "have", "is": "am", "was": "was", "did": "did", "would": "would", "might": "might",
        "could": "could", "can": "can", "will": "will", "should": "should", "had": "had"}
_OBJECT_BEFORE = ("to", "with", "for", "about", "from", "of", "by", "gave", "give", "given", "told", "tell", "help",
                  "helped", "helps", "support", "supports", "supported", "visit", "visited", "inspire", "inspired",
                  "inspires", "motivate", "motivates", "motivated", "encourage", "encouraged", "recommend",
                  "recommended", "teach", "taught", "bring", "brought", "make", "made", "makes", "remind", "reminds")
_PRONOUNS = (("herself", "myself"), ("himself", "myself"), ("she's", "I'm"), ("he's", "I'm"), ("she", "I"), ("he", "I"),
             ("his", "my"), ("her", "my"))


def first_person(question: str, name: str) -> str:
    """``question`` about ``name`` asked by ``name``: possessives, auxiliaries before the name, objects and
    pronouns moved to the first person. Grammar is approximate where English needs the whole sentence (a verb
    after "I" keeps its third-person ending); retrieval reads the words, not the agreement."""
    n = re.escape(name)
    q = re.sub(rf"\b{n}'s\b", "my", question)
    q = re.sub(rf"\b({'|'.join(_AUX)})\s+{n}\b", lambda m: f"{_AUX[m.group(1).lower()]} I", q, flags=re.IGNORECASE)
    q = re.sub(rf"\b({'|'.join(_OBJECT_BEFORE)})\s+{n}\b", lambda m: f"{m.group(1)} me", q, flags=re.IGNORECASE)
    q = re.sub(rf"\b{n}\b", "I", q)
    for third, first in _PRONOUNS:
        q = re.sub(rf"\b{third}\b", first, q, flags=re.IGNORECASE)
    return q[0].upper() + q[1:] if q else q


def convert(sample: dict, named: bool = False) -> dict | None:
    """One conversation in the first person of speaker_a; None when no question is about them alone.
    ``named``: the same questions as LoCoMo asks them, over the conversation as it is (the comparison)."""
    out = copy.deepcopy(sample)
    conv = out["conversation"]
    a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
    if not named:
        for key, turns in conv.items():
            if _SESSION.match(key) and isinstance(turns, list):
                for turn in turns:
                    if turn.get("speaker") == a:
                        turn["speaker"] = ""  # the user's own turns carry no name
    names = lambda q, who: re.search(rf"\b{re.escape(who)}\b", q) is not None  # noqa: E731
    out["qa"] = [{**qa, "question": qa["question"] if named else first_person(qa["question"], a), "asked_as": qa["question"]}
                 for qa in sample.get("qa", []) if names(str(qa.get("question", "")), a)
                 and not names(str(qa.get("question", "")), b)]
    out["sample_id"] = f"{sample.get('sample_id', 'conv')}-{'named' if named else '1p'}"
    return out if out["qa"] else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--named", action="store_true",
                        help="the same questions as LoCoMo asks them, by name, over the conversation as it is")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    converted = [c for c in (convert(s, args.named) for s in (data if isinstance(data, list) else [data])) if c is not None]
    Path(args.out).write_text(json.dumps(converted, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(converted)} conversations, {sum(len(c['qa']) for c in converted)} questions")


if __name__ == "__main__":
    main()
