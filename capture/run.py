"""Run a learner's code under `record()`, the same way for every door.

The doors (the `%%capture_trace` cell magic, the `dynamo-lab record` command) parse
their own options, hand the code to `run` as a thunk, then print the notes and show
the recording. Whatever both must say is decided here, once::

    result = capture.run(thunk, max_steps=50_000, reset=True, source=text, namespace=ns)
    result.recording   # the Recording (None when the code was refused and never ran)
    result.value       # what the thunk returned
    result.error       # what it raised, its traceback cut to the learner's frames
    result.notes       # what to tell the learner, one line each: Note(kind, text)

Refused before anything runs: code that compiles an async function (on torch 2.13 a
compiled coroutine that finishes makes the next compile crash the process). Noted
after it ran: a compiled generator function (Dynamo refuses those without compiling
anything), nothing compiled and why, the step cap reached. No IPython here.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import re
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ContextManager

from . import internals, recorder, targets
from .attempt import first_line
from .recording import Recording
from .text import MESSAGE_LIMIT, shorten

# The one statement of what Dynamo Lab runs on (pyproject.toml says the same; a test
# checks that it does). The torch releases are those the engine's reads are checked on.
SUPPORTED_PYTHON = ((3, 11), (3, 12), (3, 13))
SUPPORTED_TORCH_RELEASES = tuple(tuple(int(p) for p in v.split(".")) for v in internals.CHECKED_ON)
SUPPORTED_TORCH = (f">={'.'.join(map(str, SUPPORTED_TORCH_RELEASES[0]))},"
                   f"<{SUPPORTED_TORCH_RELEASES[-1][0]}.{SUPPORTED_TORCH_RELEASES[-1][1] + 1}")


def _span(versions: tuple[tuple[int, int], ...]) -> str:
    return f"{versions[0][0]}.{versions[0][1]}–{versions[-1][0]}.{versions[-1][1]}"


SUPPORTED = f"Python {_span(SUPPORTED_PYTHON)} and torch {_span(SUPPORTED_TORCH_RELEASES)}"


@dataclass(frozen=True)
class Note:
    """One line for the learner: `refused` (the code did not run), `generator`,
    `nothing_compiled`, `step_cap`."""

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass
class Run:
    """What running the learner's code under `record()` gave."""

    recording: Recording | None
    value: Any = None
    error: BaseException | None = None
    notes: list[Note] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """The code was not run at all (see the `refused` note)."""
        return self.recording is None

    @property
    def error_line(self) -> str:
        """`ValueError: the message's first line`, or "" when nothing was raised."""
        if self.error is None:
            return ""
        message = first_line(self.error) if str(self.error).strip() else ""
        return type(self.error).__name__ + (f": {message}" if message else "")


class NotStarted(RuntimeError):
    """The recording could not start (one already in progress, or the hooks refused);
    the code did not run. Its message is one line that says what to do."""


# -- where the lab runs -------------------------------------------------------------------

def torch_version_problem(version: str | None) -> str | None:
    """Why a Python with this torch (None: no torch) cannot run the lab, in one line; or None.

    Only the release's major.minor counts: 2.14.1+cu130 and 2.13.0+cpu are supported.
    """
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if found and (int(found[1]), int(found[2])) in SUPPORTED_TORCH_RELEASES:
        return None
    return _problem(f"torch {version}" if version else "no torch",
                    f"install torch {internals.CHECKED_ON[0]}.0 (./lab does, or "
                    f"pip install 'torch{SUPPORTED_TORCH}')")


def python_version_problem(version: tuple[int, ...] | None = None) -> str | None:
    """Why this Python (default: the running one) cannot run the lab, in one line; or None."""
    major_minor = tuple((version or sys.version_info)[:2])
    if major_minor in SUPPORTED_PYTHON:
        return None
    return _problem(f"Python {major_minor[0]}.{major_minor[1]}",
                    f"use Python {SUPPORTED_PYTHON[0][0]}.{SUPPORTED_PYTHON[0][1]} "
                    "(./lab makes a venv with it)")


def _problem(has: str, fix: str) -> str:
    return f"Dynamo Lab supports {SUPPORTED} (torch{SUPPORTED_TORCH}), and this one has {has}: {fix}."


def installed_torch() -> str | None:
    """The installed torch's version, read from its metadata (importing torch takes seconds)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def environment_problem() -> str | None:
    """The first reason this Python and its torch cannot run the lab, in one line; or None."""
    return python_version_problem() or torch_version_problem(installed_torch())


# -- running ------------------------------------------------------------------------------

def run(thunk: Callable[[], Any], *, max_steps: int = recorder.DEFAULT_MAX_STEPS,
        reset: bool = True, source: str = "", namespace: dict[str, Any] | None = None,
        name: str = "the code", hide: Iterable[str] = (),
        during: Callable[[Recording], ContextManager[Any]] | None = None,
        after_dynamo: bool = False, only: Any = None) -> Run:
    """Run `thunk()` under `record()` and say what the learner should know about it.

    `source` is the code's text and `namespace` the names it runs in (read, never
    evaluated, to find what it hands to `torch.compile`); `name` is how notes call the
    code ("the cell", "train.py"). Frames in the folders of `hide` (the door's own),
    torch, runpy, IPython and this package are cut from the error's traceback.
    `during(recording)` is entered around the thunk while it records (a progress line).
    `after_dynamo=True` also records AOTAutograd's and Inductor's stages, and `only` keeps
    steps for the named functions alone (`record()`'s options).
    Raises `NotStarted` when the recording cannot start; the code then has not run.
    """
    namespace = {} if namespace is None else namespace
    coroutines = targets.compiled_coroutines(source, namespace)
    if coroutines:
        return Run(None, notes=[Note("refused", targets.coroutine_refusal(coroutines))])
    try:
        recorder.prepare(reset=reset)
    except RuntimeError:
        raise NotStarted("a recording is already in progress (a `capture.record()` block is "
                         "open): finish it before recording again.") from None
    refused_before = targets.generators_refused()
    recording, value, error = None, None, None
    try:
        with recorder.record(max_steps=max_steps, after_dynamo=after_dynamo,
                             only=only) as recording:
            with during(recording) if during is not None else contextlib.nullcontext():
                value = thunk()
    except SystemExit as e:
        if e.code not in (None, 0):  # exit(0) is a normal end, as for `python script.py`
            error = e
    except (Exception, KeyboardInterrupt) as e:
        if recording is None:  # record() itself raised: the code did not run
            raise NotStarted(f"could not start recording: {first_line(e)}") from None
        error = e
    if error is not None:
        cut_to_learner_frames(error, hide)
    notes = _notes(recording, error, source, namespace, name, reset, refused_before)
    return Run(recording, value, error, notes)


def _notes(recording: Recording, error: BaseException | None, source: str,
           namespace: dict[str, Any], name: str, reset: bool, refused_before: int) -> list[Note]:
    notes = []
    if not recording.compiles:
        generators = targets.compiled_generators(source, namespace)
        if error is None and (generators or targets.generators_refused() > refused_before):
            notes.append(Note("generator", targets.generator_refusal(generators)))
        else:
            notes.append(Note("nothing_compiled", nothing_compiled(recording, error, name, reset)))
    if recording.truncated:
        cap = recording.max_steps
        notes.append(Note("step_cap", (
            f"the recording reached its step cap (--max-steps {cap}) and stopped storing steps; "
            f"the compiles marked 'truncated' are incomplete. Record again with a larger cap, "
            f"e.g. --max-steps {cap * 4}.")))
    return notes


def nothing_compiled(recording: Recording, error: BaseException | None, name: str = "the code",
                     reset: bool = True) -> str:
    """Why a recording holds no compile, and what to do about it, in one line."""
    if error is not None:
        return (f"{name} raised {type(error).__name__} before Dynamo compiled anything, so "
                "there is nothing to step through; fix the error and run it again.")
    problems = [e for e in recording.events if e.kind in ("error", "cache_limit")]
    why = f" Dynamo reported: {problems[0].kind}: {problems[0].message}." if problems else ""
    hint = ("" if reset else " With --no-reset, calls Dynamo had compiled before are served "
            "from its cache: run it again without --no-reset.")
    return shorten(f"nothing was compiled while {name} ran: Dynamo traces a function only when "
                   f"a torch.compile'd function or module is called. Call one in {name}, e.g. "
                   f"torch.compile(f, backend=\"eager\")(x).{hint}{why}", MESSAGE_LIMIT)


# -- the learner's frames -------------------------------------------------------------------

def library_dirs(hide: Iterable[str] = ()) -> tuple[str, ...]:
    """Folders whose frames are not the learner's: torch, runpy, IPython (when loaded), this
    package, and `hide`."""
    dirs = [os.path.dirname(__file__), *hide]
    for module in ("torch", "IPython"):
        loaded = sys.modules.get(module)
        if getattr(loaded, "__file__", None):
            dirs.append(os.path.dirname(loaded.__file__))
    runpy = sys.modules.get("runpy")
    # runpy's own code names itself "<frozen runpy>" where the standard library is frozen.
    files = ("<frozen runpy>", runpy.__file__) if getattr(runpy, "__file__", None) else ("<frozen runpy>",)
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs) + files


def cut_to_learner_frames(error: BaseException, hide: Iterable[str] = ()) -> BaseException:
    """Take the frames of torch, runpy, IPython, this package and `hide` out of the error's
    traceback, and out of the exceptions it chains to; returns the error."""
    skip = library_dirs(hide)
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = _kept(e.__traceback__, skip)
        e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    return error


def _kept(tb: types.TracebackType | None, skip: tuple[str, ...]) -> types.TracebackType | None:
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(skip):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for frame in reversed(kept):
        out = types.TracebackType(out, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return out


__all__ = ["run", "Run", "Note", "NotStarted", "SUPPORTED", "SUPPORTED_PYTHON", "SUPPORTED_TORCH",
           "SUPPORTED_TORCH_RELEASES", "environment_problem", "installed_torch",
           "nothing_compiled", "python_version_problem", "torch_version_problem",
           "cut_to_learner_frames"]
