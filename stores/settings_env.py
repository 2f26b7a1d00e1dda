"""The ``LUMINA_*`` environment checked against the settings: a variable no setting reads is an error naming it.

pydantic-settings reads only the variables that name a field, so a misspelt ``LUMINA_RECALL_TURN_DENS`` or a
setting that was removed would otherwise do nothing while the user believes it applied.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

from dotenv import dotenv_values
from pydantic import AliasChoices, BaseModel
from pydantic_settings import BaseSettings

PREFIX = "LUMINA_"
NESTED = "__"
OTHER_VARIABLES = frozenset({"LUMINA_LOG_FORMAT", "LUMINA_LOG_LEVEL"})
"""Read outside the settings, before they exist: the logging set-up (lumina_memory.graphs.logging_setup)."""

REMOVED: dict[str, str] = {
    "LUMINA_ARCHIVE_RETENTION_DAYS": "raw turns are kept LUMINA_RETENTION_RAW_TURNS_DAYS; archived memories are "
    "deleted after LUMINA_LIFECYCLE__ARCHIVE_RETENTION_DAYS",
    "LUMINA_RECALL_TURN_DENSE": "recall's dense turn search is LUMINA_RECALL_TURN_CONTENT (the query's content view)",
    "LUMINA_RECALL_SEGMENT_DENSE": "a deliberate question's recall does not search segment vectors; a reply's does "
    "(LUMINA_RECALL_LIFECYCLE ranks them as remembered)",
    "LUMINA_RECALL_FUNCTION_WORDS": "recall reads every word of a question as a keyword",
    "LUMINA_RECALL_WHEN": "recall does not lift the turns that name a time for a when-question",
    "LUMINA_RECALL_WHEN_LIFT": "recall does not lift the turns that name a time for a when-question",
    "LUMINA_RECALL_DECOMPOSE": "recall searches a question asking for several things as one question; its parts' "
    "own keyword rankings added nothing on any labelled set (docs/recall.md)",
}
"""Names that look like settings but that nothing would apply, and what governs that behaviour instead."""


class UnknownSetting(ValueError):
    """A ``LUMINA_*`` variable that no setting reads."""


def env_names(settings_cls: type[BaseModel]) -> dict[str, str]:
    """Every variable the settings read -> its field path (``recall_mmr``, ``lifecycle.top_k``)."""
    names: dict[str, str] = {}
    for name, field in settings_cls.model_fields.items():
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if isinstance(alias, str) else []
        for choice in choices or [PREFIX + name]:
            names[str(choice).upper()] = name
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            for sub in group.model_fields:
                names[f"{PREFIX}{name}{NESTED}{sub}".upper()] = f"{name}.{sub}"
    return names


def check_keywords(settings_cls: type[BaseModel], values: Mapping[str, object]) -> None:
    """Raise UnknownSetting for a keyword argument that names no setting (by field name or alias)."""
    known = set(settings_cls.model_fields) | {name.lower() for name in env_names(settings_cls)}
    unknown = sorted(k for k in values if not k.startswith("_") and k not in known and k.lower() not in known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(settings_cls.model_fields), n=1, cutoff=0.8)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise UnknownSetting(f"{', '.join(unknown)}: not a Lumina setting.{hint}")


def _dotenv(env_file: object) -> dict[str, str]:
    if not isinstance(env_file, (str, os.PathLike)) or not os.path.isfile(env_file):
        return {}
    return {k: v or "" for k, v in dotenv_values(env_file).items()}


def check_environment(settings_cls: type[BaseSettings], environ: Mapping[str, str] | None = None) -> None:
    """Raise UnknownSetting for a ``LUMINA_*`` variable (environment or the settings' env file) that is a removed
    setting or names none."""
    if environ is None:
        environ = {**_dotenv(settings_cls.model_config.get("env_file")), **os.environ}
    known = env_names(settings_cls)
    for variable in sorted(environ):
        upper = variable.upper()
        if not upper.startswith(PREFIX) or upper in known or upper in OTHER_VARIABLES:
            continue
        if upper in REMOVED:
            raise UnknownSetting(f"{variable} is not a setting (nothing would apply it): {REMOVED[upper]}. Unset it.")
        group = upper.rpartition(NESTED)[0] + NESTED if NESTED in upper else PREFIX
        tails = {name[len(group):]: name for name in (*known, *OTHER_VARIABLES)
                 if name.startswith(group) and NESTED not in name[len(group):]}
        close = difflib.get_close_matches(upper[len(group):], list(tails), n=1, cutoff=0.75)
        hint = f" Did you mean {tails[close[0]]}?" if close else " See docs/configuration.md for every setting."
        raise UnknownSetting(f"{variable} is not a Lumina setting.{hint}")
