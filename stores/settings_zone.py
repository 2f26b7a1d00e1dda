"""An IANA time zone name as a settings type: validated when the settings load, so a typo fails at start."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator


def known_zone(value: str) -> str:
    """``value`` if the zone database knows it; ValueError naming it otherwise."""
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"timezone {value!r} is not an IANA time zone (e.g. Asia/Tokyo)") from exc
    return value


ZoneName = Annotated[str, AfterValidator(known_zone)]
