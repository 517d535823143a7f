"""Text from users' files shown as typed: no link, no markup (issue 15; issue 21 part 8)."""

from __future__ import annotations

import re

from core.untrusted import escape_markdown


def test_bare_urls_cannot_become_links():
    """GitHub-flavoured Markdown links ``https://…`` and ``www.…`` written bare; escaped, neither is left."""
    text = escape_markdown("see https://evil.example/x and www.evil.example now.csv")
    assert "://" not in text and "www." not in text
    assert re.sub(r"\\(.)", r"\1", text) == "see https://evil.example/x and www.evil.example now.csv"


def test_a_link_tag_in_a_file_name_is_text():
    text = escape_markdown('<a href="x">re-authenticate</a>.csv')
    assert "<" not in text.replace("\\<", "") and ">" not in text.replace("\\>", "")
