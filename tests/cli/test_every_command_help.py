"""Every command of the CLI registry prints its help: a help text with a stray ``%`` made argparse raise
``ValueError`` on ``predict --help`` (issue 36's walk).  Parametrised over ``core.cli.COMMANDS`` itself."""

from __future__ import annotations

import pytest

from core.cli import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_of_every_command(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m core {name}")
    assert COMMANDS[name][1].split(":")[0][:40] in " ".join(out.split())
