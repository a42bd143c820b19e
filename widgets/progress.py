"""How far a long recording has got, said on stderr from a thread of its own (`dynamo-lab`)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

PROG = "dynamo-lab"
# The first line after this many seconds of recording, then again every PROGRESS_EVERY
# seconds (rewritten in place on a terminal, a new line otherwise).
PROGRESS_AFTER = 2.0
PROGRESS_EVERY = {True: 1.0, False: 10.0}


def say(message: str, stream: TextIO | None = None) -> None:
    """One line on stderr, prefixed `dynamo-lab:`."""
    print(f"{PROG}: {message}", file=stream or sys.stderr, flush=True)


class Progress:
    """A context manager that reports a live recording's compiles and steps while it runs."""

    def __init__(self, recording: Any, what: str, stream: TextIO | None = None) -> None:
        self.recording = recording
        self.what = what
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dynamo-lab progress",
                                        daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def line(self) -> str:
        seconds = time.monotonic() - self.start
        return (f"{PROG}: recording {self.what}: {len(self.recording.compiles)} compile(s), "
                f"{self.recording.step_count:,} step(s), {seconds:.0f} s")

    def _run(self) -> None:
        if self._stop.wait(PROGRESS_AFTER):
            return
        every = PROGRESS_EVERY[self.tty]
        while True:
            text = self.line()
            try:
                if self.tty:
                    self.stream.write("\r" + text + "\x1b[K")
                else:
                    self.stream.write(text + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # stderr closed by the program
                return
            self.shown = True
            if self._stop.wait(every):
                return
