"""The README block extraction of `make test-packaging` (tests/packaging/blocks.py)."""

from __future__ import annotations

import pytest

from tests.packaging.__main__ import ROOT, readmes
from tests.packaging.blocks import Inventory, parse, rust_program

SAMPLE = """\
# Title

```sh
echo run me
```

## Install

```sh synopsis
make test
```

```toml
[dependencies]
```

```rust,no_run
# #[tokio::main]
# async fn main() {
let x = 1;
#
# }
```

~~~~python
```
print("a fence inside")
~~~~

```
a diagram
```
"""


def test_blocks_languages_attributes_sections() -> None:
    blocks = parse("R.md", SAMPLE)
    got = [(b.line, b.lang, b.attrs, b.section, b.runnable, b.install) for b in blocks]
    assert got == [
        (3, "sh", (), "Title", True, False),
        (9, "sh", ("synopsis",), "Install", False, True),
        (13, "toml", (), "Install", False, True),
        (17, "rust", ("no_run",), "Install", True, True),
        (25, "python", (), "Install", True, True),
        (30, "", (), "Install", False, True),
    ]
    assert blocks[4].text == '```\nprint("a fence inside")\n'


def test_untaken_names_every_runnable_block_no_runner_took() -> None:
    inv = Inventory(parse("R.md", SAMPLE))
    assert [b.lang for b in inv.take("R.md", ("rust",))] == ["rust"]
    assert [b.where() for b in inv.untaken()] == ["R.md:3", "R.md:25"]
    assert inv.untaken(frozenset({"R.md"})) == []


def test_rust_program_shows_the_hidden_lines() -> None:
    rust = parse("R.md", SAMPLE)[3]
    assert rust_program(rust) == "#[tokio::main]\nasync fn main() {\nlet x = 1;\n\n}\n"


def test_an_unclosed_block_fails() -> None:
    with pytest.raises(ValueError, match=r"R\.md:1: unclosed"):
        parse("R.md", "```sh\necho\n")


def test_the_repository_readmes_parse() -> None:
    inv = Inventory.of(ROOT, readmes())
    assert any(b.readme == "README.md" and b.lang == "python" for b in inv.blocks)
