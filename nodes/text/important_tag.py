"""The notes' ``[IMPORTANT]`` tag: a memory whose text holds it is protected (never compressed or forgotten),
as a memory the user asked to keep is (F8). The agent's write_memory tags a note so; a user or an imported
note may write the tag by hand. Matched as written, brackets included, case-insensitively and in full-width
forms (NFKC): 「［ＩＭＰＯＲＴＡＮＴ］」 is the same tag.
"""

from __future__ import annotations

import re
import unicodedata

TAG = "[IMPORTANT]"
_TAG = re.compile(r"\[\s*important\s*\]", re.I)


def has_important_tag(text: str) -> bool:
    return bool(_TAG.search(unicodedata.normalize("NFKC", text or "")))


def tagged(text: str) -> str:
    """``text`` with the tag in front (once)."""
    return text if has_important_tag(text) else f"{TAG} {text}"
