"""A LoCoMo-shaped file of any size, for tests and for figures when the real file is absent.

The real LoCoMo file (CC BY-NC 4.0) is not ours to ship; /work/shared/formats/locomo.md
describes its shape. This writes the same shape from a seed: two speakers per sample,
dated sessions of dialogue turns, observations citing their source turns, session
summaries and questions whose evidence spans one to three sessions (category 5
questions carry an `adversarial_answer` instead of an answer). The words are made up,
so the figures it yields show how a rule moves a number, not the literature's values.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

_NAMES = ("Mira", "Tomas", "Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew",
          "Evan", "Sam", "Joanna", "Nate", "Tim", "John", "Maria", "Deborah", "Calvin", "Dave")
_TOPICS = (
    ("pottery", "kiln", "glaze", "bowl"), ("greyhound", "leash", "race", "vet"),
    ("guitar", "chords", "concert", "band"), ("marathon", "training", "shoes", "pace"),
    ("garden", "tomatoes", "compost", "seeds"), ("bakery", "sourdough", "oven", "flour"),
    ("painting", "canvas", "watercolor", "gallery"), ("hiking", "trail", "summit", "boots"),
    ("chess", "opening", "tournament", "rating"), ("camping", "tent", "lake", "fire"),
    ("volunteering", "shelter", "donations", "meals"), ("photography", "lens", "sunset",
                                                         "portrait"),
    ("cooking", "recipe", "spices", "curry"), ("cycling", "helmet", "route", "bike"),
    ("reading", "novel", "library", "author"), ("adoption", "agency", "family", "papers"),
    ("startup", "investors", "launch", "product"), ("yoga", "retreat", "mat", "breathing"),
)
_VERBS = ("started", "finished", "planned", "talked about", "signed up for", "loved",
          "worried about", "bought", "showed", "tried")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _when(day: int) -> str:
    """A LoCoMo date-time string `day` days after 1 January 2022."""
    year, rest = 2022 + day // 336, day % 336
    month, date = rest // 28, rest % 28 + 1
    hour = 1 + day % 12
    return f"{hour}:{(day * 7) % 60:02d} {'am' if day % 2 else 'pm'} on {date} " \
        f"{_MONTHS[month]}, {year}"


def _sample(rng: random.Random, index: int, sessions: int) -> dict[str, Any]:
    a, b = rng.sample(_NAMES, 2)
    conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    observation: dict[str, Any] = {}
    summaries: dict[str, str] = {}
    facts: list[tuple[int, str, str, str]] = []  # (session, dia id, speaker, topic word)
    day = rng.randrange(0, 100)
    for number in range(1, sessions + 1):
        day += rng.randrange(3, 20)
        conversation[f"session_{number}_date_time"] = _when(day)
        turns, said = [], {a: [], b: []}  # type: ignore[var-annotated]
        topics = rng.sample(_TOPICS, 3)
        for k in range(1, rng.randrange(12, 24)):
            speaker = a if k % 2 else b
            topic = rng.choice(topics)
            word = rng.choice(topic[1:])
            text = f"I {rng.choice(_VERBS)} the {word} for my {topic[0]} this week."
            dia = f"D{number}:{k}"
            turns.append({"speaker": speaker, "dia_id": dia, "text": text})
            if rng.random() < 0.55:
                fact = f"{speaker} {rng.choice(_VERBS)} the {word} ({topic[0]})."
                said[speaker].append([fact, dia])
                facts.append((number, dia, speaker, f"{topic[0]} {word}"))
        conversation[f"session_{number}"] = turns
        observation[f"session_{number}_observation"] = said
        told = [fact for facts_of in said.values() for fact, _ in facts_of]
        summaries[f"session_{number}_summary"] = (
            f"{a} and {b} talked on {_when(day)}. " + " ".join(rng.sample(told, min(4, len(told)))))
    qa = []
    for _ in range(rng.randrange(150, 260)):
        category = rng.choices((1, 2, 3, 4, 5), weights=(14, 16, 5, 43, 22))[0]
        hops = 1 if category in (2, 4, 5) else rng.randrange(2, 4)
        chosen = rng.sample(facts, min(hops, len(facts)))
        speaker, words = chosen[0][2], chosen[0][3]
        item: dict[str, Any] = {
            "question": f"What did {speaker} do about the {words}?",
            "evidence": [dia for _, dia, _, _ in chosen], "category": category}
        if category == 5:
            item["adversarial_answer"] = "not mentioned"
        else:
            item["answer"] = f"{speaker} and the {words}"
        qa.append(item)
    return {"sample_id": f"conv-{index + 1}", "conversation": conversation,
            "observation": observation, "session_summary": summaries,
            "event_summary": {}, "qa": qa}


def write_locomo_like(path: Path, *, samples: int = 10, seed: int = 0,
                      sessions: tuple[int, int] = (19, 32)) -> Path:
    """Write a LoCoMo-shaped JSON list of `samples` conversations to `path`."""
    rng = random.Random(seed)
    data = [_sample(rng, i, rng.randrange(sessions[0], sessions[1] + 1))
            for i in range(samples)]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


if __name__ == "__main__":  # python tests/_locomo_like.py OUT.json [samples]
    import sys

    write_locomo_like(Path(sys.argv[1]), samples=int(sys.argv[2]) if len(sys.argv) > 2 else 10)
