"""A whole command line typed (or pasted from a README) where a program name belongs.

A stdio server is started without a shell: `npx -y pkg` in **Command** with no arguments was
looked up as one program named "npx -y pkg" and failed with "command not found". Hosts' JSON
has the same mistake. The line is split here as a POSIX shell would split it (`shlex`: quotes,
backslashes), leading `NAME=value` words become environment variables as a shell would set
them, and what was done is said in one sentence. Syntax only a shell gives a meaning to (pipes,
redirections, `&&`, command substitution), written apart or attached to a word (`pkg|tee`), is
refused with the reason: no shell runs the line.

Pure functions, no Django: the server form and the import share them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass, field

from playground.mcp.secrets import mask_env

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ";;", "<", ">", ">>", "<<", "2>", "2>>", "&>", "2>&1", ">&2", "|&"})
_SUBSTITUTION = ("$(", "`")
_PUNCTUATION = frozenset("();<>|&")  # shlex's punctuation_chars: a shell's operator characters
_VARIABLE = re.compile(r"\$\{?[A-Za-z_]")
# Shown in the sentence: a few words are enough to recognise, an arbitrary line is not.
_SHOWN_WORDS = 12
_SHOWN_CHARS = 80


class CommandLineError(ValueError):
    """The command line cannot be run without a shell (or cannot be split at all)."""


@dataclass
class Split:
    command: str
    args: list[str]  # the line's words, then the arguments given
    assigned: dict[str, str] = field(default_factory=dict)  # its leading NAME=value words
    message: str = ""


def split_command_line(command: str, args: list[str] | None = None) -> Split | None:
    """`command` split into a program and its arguments, or None when it is one program already
    (no whitespace, or the name of a file or a program on PATH that contains spaces). Words it
    holds come before `args`; its leading `NAME=value` words are `assigned` (a shell sets them
    for the program: callers add them to the environment, over the same names). Raises
    CommandLineError for shell syntax."""
    command = command.strip()
    args = list(args or [])
    if not any(c.isspace() for c in command) or _is_program(command):
        return None
    try:
        words = shlex.split(command, posix=True)
        # The same line cut where a shell cuts it: an operator attached to a word (`pkg|tee`,
        # `pkg;`, `a&&b`) becomes its own token, which shlex.split leaves inside the word.
        operators = [t for t in _shell_tokens(command) if t and all(c in _PUNCTUATION for c in t)]
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise CommandLineError(
            f"The command line cannot be split ({str(exc).lower()}): close the quote, or put "
            "each argument on its own line under Arguments."
        ) from None
    shell_syntax = [
        *(w for w in words if any(s in w for s in _SUBSTITUTION) or w in _OPERATORS or w.startswith((">", "<", "2>"))),
        *operators,
    ]
    if shell_syntax:
        raise CommandLineError(
            f"{shell_syntax[0]!r} is shell syntax, and a stdio server is started without a shell. Remove it, or run "
            "the line through a shell: Command sh, Arguments -c and the whole line."
        )
    assigned: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        assigned[name] = value
    if not words:
        raise CommandLineError("The command line sets variables but names no program to start.")
    program, before = words[0], words[1:]
    return Split(
        command=program, args=before + args, assigned=assigned, message=_sentence(program, before, args, assigned)
    )


def _shell_tokens(command: str) -> list[str]:
    """The line's tokens with unquoted runs of operator characters as tokens of their own
    (a quoted operator is one too: shlex does not say which were quoted)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # as shlex.split: `#` is a character like any other
    return list(lexer)


def _is_program(command: str) -> bool:
    """A path or PATH name that exists as typed, spaces and all ("/opt/My Server/run")."""
    return os.path.exists(os.path.expanduser(command)) or shutil.which(command) is not None


def _quoted(words: list[str]) -> str:
    shown = [f"`{w if len(w) <= _SHOWN_CHARS else w[:_SHOWN_CHARS] + '…'}`" for w in words[:_SHOWN_WORDS]]
    if len(words) > _SHOWN_WORDS:
        shown.append(f"and {len(words) - _SHOWN_WORDS} more")
    return ", ".join(shown)


def _sentence(program: str, before: list[str], given: list[str], assigned: dict[str, str]) -> str:
    text = f"Split the command line into command `{program}`"
    if before:
        text += f" and argument{'s' if len(before) > 1 else ''} {_quoted(before)}"
        if given:
            text += f" (before the {len(given)} already under Arguments)"
    text += "."
    if assigned:
        shown = [f"{k}={v}" for k, v in mask_env(assigned).items()]
        text += f" Moved {_quoted(shown)} to Environment."
    unexpanded = [w for w in [program, *before] if w.startswith("~") or _VARIABLE.search(w)]
    if unexpanded:
        one = len(unexpanded) == 1
        text += (
            f" {_quoted(unexpanded)} {'is' if one else 'are'} passed as written: no shell expands "
            f"{'it' if one else 'them'}."
        )
    return text
