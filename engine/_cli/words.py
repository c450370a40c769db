"""Where the ``flower`` command puts a person's words after a Ctrl-C, and why none is lost.

Words are for the coordinator, the work step's agent. While it runs it is interrupted with them
at once. While the clarifier, the goal setter or the judge runs (or between steps) they are held
and given to the coordinator as its next turn starts: a judge that heard them would spend a round
on them and the coordinator would never see them. Every word acknowledged on screen is also kept
in ``<run_dir>/unsent-words.json`` until a user message of the coordinator's transcript holds it
(Ctrl-C twice right after typing used to lose words the screen had acknowledged); the next
``flower`` in the folder gives what is left to the coordinator first.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TextIO

from engine import Event, StarterRun
from engine._cli.cli_texts import say as cli_text
from engine.events import Label
from engine.host import SESSIONS_FILE, write_json_atomic
from engine.lang import starter_step_name, step_names

log = logging.getLogger(__name__)

UNSENT_FILE = "unsent-words.json"
Where = Literal["coordinator", "held"]

def is_work(label: Label | None) -> bool:
    """True for the work step's own sessions (any round), not its judge's."""
    return label is not None and label.role == "step" and label.name in step_names(starter_step_name("work"))


def running_step(run: StarterRun) -> Label | None:
    """Whose session is in flight, or None between steps."""
    return run.runtime.label_in_flight if run.runtime is not None else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def said_in(db: Path, sessions: Iterable[str], words: Iterable[str]) -> set[str]:
    """The ``words`` that a user message of these sessions' main transcripts holds (read-only)."""
    ids, words = sorted(set(sessions)), list(words)
    if not ids or not words or not db.is_file():
        return set()
    found: set[str] = set()
    try:
        conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=5.0)
        try:
            rows = conn.execute(
                "SELECT e.data FROM entries e JOIN meta m ON e.key_id = m.id WHERE m.subpath = '' "
                f"AND m.session_id IN ({','.join('?' * len(ids))})", ids)
            for (data,) in rows:
                if '"user"' not in data:
                    continue
                entry = json.loads(data)
                if isinstance(entry, dict) and entry.get("type") == "user":
                    text = _text((entry.get("message") or {}).get("content"))
                    found.update(w for w in words if w in text)
        finally:
            conn.close()
    except (sqlite3.Error, ValueError) as exc:  # unreadable: keep the words, saying them twice is harmless
        log.warning("could not read %s to see which words arrived (%s)", db, exc)
    return found


class Words:
    """One ``flower`` process's words for the coordinator: given now, held, or kept on disk."""

    def __init__(self, run_dir: Path, out: TextIO) -> None:
        self.run_dir = run_dir
        self.path = run_dir / UNSENT_FILE
        self.out = out
        self.held: list[str] = []  # for the coordinator's next turn
        self.unsent: list[str] = []  # acknowledged, not yet seen in its transcript (the file)
        self.sessions: set[str] = set()  # the work step's sessions, for the transcript check
        self._news: list[str] | None = None  # restore()'s lines, said once the run holds the workspace

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def _save(self) -> None:
        try:
            if self.unsent:
                write_json_atomic(self.path, self.unsent)
            else:
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not keep the unsent words in %s (%s)", self.path, exc)

    def restore(self, work_session: str | None, *, new: bool) -> None:
        """Take over the words an earlier process left unsent: held for the coordinator, or
        dropped when ``new`` (a fresh start archives the task they were about). Writes nothing
        (another live run may own the file); the screen hears of it with the run's first event."""
        try:
            left = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        left = [w for w in left if isinstance(w, str) and w.strip()] if isinstance(left, list) else []
        if work_session:
            self.sessions.add(work_session)
        arrived = said_in(self.run_dir / SESSIONS_FILE, self.sessions, left)
        left = [w for w in left if w not in arrived]
        self._news = []
        if left and new:
            self._news.append(cli_text("dropped", said=" / ".join(left)))
            left = []
        elif left:
            self._news.append(cli_text("restored", said=" / ".join(left)))
        self.held, self.unsent = list(left), list(left)

    def say(self, run: StarterRun, said: str) -> Where:
        """The person's ``said`` (acknowledged on screen): to the coordinator now, else held."""
        self.unsent.append(said)
        self._save()  # before the screen says so: a Ctrl-C right after must not lose it
        step, rt = running_step(run), run.runtime
        if is_work(step) and rt is not None and rt.interrupt(said):
            self._say(cli_text("sent"))
            return "coordinator"
        self.held.append(said)
        self._say(cli_text("held", step=str(step) if step else cli_text("this_step")))
        return "held"

    def on_event(self, run: StarterRun, event: Event) -> None:
        """Give the held words to the coordinator as soon as its turn starts."""
        if self._news is not None:  # the first event: this run holds the workspace now
            for line in self._news:
                self._say(line)
            self._news = None
            self._save()
        if event.kind != "session" or not (event.role == "step" and event.name in step_names(starter_step_name("work"))):
            return
        self.sessions.add(getattr(event, "session_id", ""))
        if self.held and run.runtime is not None and run.runtime.interrupt("\n".join(self.held)):
            self._say(cli_text("given", said=" / ".join(self.held)))
            self.held.clear()

    def take_held(self) -> list[str]:
        """The held words no coordinator turn took (the run ended first), now forgotten here."""
        held, self.held = self.held, []
        return held

    def settle(self) -> list[str]:
        """Forget the words the coordinator's transcript now holds; return (and keep on disk)
        the rest."""
        arrived = said_in(self.run_dir / SESSIONS_FILE, self.sessions, self.unsent)
        self.unsent = [w for w in self.unsent if w not in arrived]
        self._save()
        return list(self.unsent)

    def report_kept(self) -> None:
        """Say which words stay on disk for the next run, if any."""
        if self.unsent:
            self._say(cli_text("kept", said=" / ".join(self.unsent)))
