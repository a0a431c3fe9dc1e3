"""A LoCoMo-shaped file whose questions a context can answer, for the answer stage.

The real file is not ours to ship (/work/shared/formats/locomo.md, docs/research.md);
tests/_locomo_like.py writes its shape at any size. Here every session states one
fact about a speaker in a sentence of its own, and each question asks for that fact
(with its evidence turn), so an answer found in the surfaced memory can be scored."""

from __future__ import annotations

import json
from pathlib import Path

PEOPLE = [("Mira", "Tomas"), ("Ines", "Kofi"), ("Lena", "Arjun"), ("Sofia", "Pavel"),
          ("Noor", "Elias"), ("Hana", "Diego")]
# (what was said, question, answer): one a session
TOPICS = ["a greyhound", "a move abroad", "pottery", "a bicycle", "a sister", "tomatoes"]
FACTS = [
    ("I adopted a greyhound called {x}.", "What is the name of {who}'s greyhound?",
     ["Biscuit", "Pepper", "Rocket", "Juniper", "Maple", "Otto"]),
    ("I am moving to {x} in September.", "Which city is {who} moving to?",
     ["Lisbon", "Oslo", "Porto", "Kyoto", "Quito", "Tallinn"]),
    ("My pottery class meets on {x} evenings.",
     "On which evenings does {who}'s pottery class meet?",
     ["Tuesday", "Monday", "Friday", "Thursday", "Wednesday", "Sunday"]),
    ("I finally bought a {x} bicycle.", "What colour is the bicycle {who} bought?",
     ["red", "green", "yellow", "silver", "orange", "purple"]),
    ("My sister works as a {x} downtown.", "What does {who}'s sister work as?",
     ["pharmacist", "carpenter", "librarian", "dentist", "baker", "architect"]),
    ("I planted {x} tomato plants this spring.", "How many tomato plants did {who} plant?",
     ["seven", "three", "twelve", "five", "nine", "eleven"]),
]
MONTHS = ["January", "February", "March", "April", "May", "June"]


def locomo_like(samples: int = 6) -> list[dict]:
    data = []
    for s in range(samples):
        a, b = PEOPLE[s % len(PEOPLE)]
        conversation: dict = {"speaker_a": a, "speaker_b": b}
        observation: dict = {}
        summaries: dict = {}
        qa = []
        for n, (said, asked, values) in enumerate(FACTS, start=1):
            who = a if n % 2 else b
            value = values[(s + n) % len(values)]
            text = said.format(x=value)
            conversation[f"session_{n}_date_time"] = \
                f"1:{10 + n} pm on {n + 2} {MONTHS[n - 1]}, 2023"
            conversation[f"session_{n}"] = [
                {"speaker": who, "dia_id": f"D{n}:1", "text": "Hi, how has your week been?"},
                {"speaker": a if who == b else b, "dia_id": f"D{n}:2", "text": "Busy but good."},
                {"speaker": who, "dia_id": f"D{n}:3", "text": text}]
            observation[f"session_{n}_observation"] = {
                who: [[f"{who}: {text}", f"D{n}:3"]]}
            summaries[f"session_{n}_summary"] = (f"{a} and {b} caught up in {MONTHS[n - 1]} "
                                                 f"2023. They talked about {TOPICS[n - 1]}.")
            qa.append({"question": asked.format(who=who), "answer": value,
                       "evidence": [f"D{n}:3"], "category": 4})
        qa.append({"question": f"Which marathon did {a} win last year?", "category": 5,
                   "evidence": ["D1:1"], "adversarial_answer": "Boston"})
        data.append({"sample_id": f"like-{s + 1}", "conversation": conversation,
                     "observation": observation, "session_summary": summaries, "qa": qa})
    return data


def write_locomo_like(path: Path, samples: int = 6) -> Path:
    path.write_text(json.dumps(locomo_like(samples), indent=1), encoding="utf-8")
    return path
