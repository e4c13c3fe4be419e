"""The SDK's errors in its own words: the setup path is the command line's, whose messages name flags
(``pass --api-key``, ``Use --list-models``); a program calling :func:`tau.create_agent_session`
passes keywords, so the messages it sees name those (``pass api_key=``)."""

from __future__ import annotations

import re

__all__ = ["in_sdk_words"]

_PHRASES = (
    # whole phrases first, where a keyword alone would not say what to do
    (
        "Use --list-models to see available providers/models.",
        "tau.ModelRegistry().get_all() lists the models.",
    ),
    ("Use --list-models to see available models.", "tau.ModelRegistry().get_all() lists the models."),
    ("See `tau --list-models`.", "tau.ModelRegistry().get_all() lists the models."),
    ("Use --provider or provider/model.", 'Pass provider= or model="provider/id".'),
    (
        "`--model faux/faux-1 --faux-script FILE` runs offline.",
        'model="faux/faux-1" with faux_script= runs offline.',
    ),
    ("--model faux/faux-1 --faux-script FILE", 'model="faux/faux-1" with faux_script='),
    ("Use --model provider/id", 'Pass model="provider/id"'),
    ("Pick one with --model provider/id", 'Pick one with model="provider/id"'),
    ("for example --model ", 'for example model="'),
)
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)\b")
_KEYWORDS = {
    "api-key": "api_key=",
    "model": "model=",
    "provider": "provider=",
    "tools": "tools=",
    "no-tools": "tools=[]",
    "thinking": "thinking=",
    "session": "session=",
    "session-id": "session_id=",
    "session-dir": "session_dir=",
    "fork": "fork=",
    "name": "name=",
    "system-prompt": "system_prompt=",
    "append-system-prompt": "append_system_prompt=",
    "faux-script": "faux_script=",
    "exclude-tools": "exclude_tools=",
    "no-builtin-tools": "no_builtin_tools=True",
    "no-extensions": "extensions=False",
    "disable-extension": "disable_extensions=",
    "approve": "approve=True",
    "no-approve": "approve=False",
}


def in_sdk_words(message: str) -> str:
    """``message`` with the command line's flags named as :func:`tau.create_agent_session`'s keywords."""
    for phrase, words in _PHRASES:
        message = message.replace(phrase, words)
    # `for example model="anthropic/x)`: close the quote the phrase opened
    message = re.sub(r'for example model="([^\s)]+)', r'for example model="\1"', message)
    return _FLAG.sub(lambda match: _KEYWORDS.get(match.group(1), match.group(0)), message)
