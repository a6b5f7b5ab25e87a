"""An offline `o200k_base` token counter, for the tests (the fitting estimate is checked
against it) and the benchmarks (`bench/tokens.py` re-exports it).

`tiktoken` downloads its vocabulary on first use, which this machine cannot do. The same
vocabulary ships inside the npm `tiktoken@1.0.22` package (`encoders/o200k_base.json`), a
pinned dev dependency of the project (`npm ci`; else fetched from the npm registry once into
`bench/.cache/`); it is rewritten in tiktoken's own file format, checked against the
SHA-256 tiktoken pins for the official file, and put where tiktoken looks for its cache. From then on `tiktoken.get_encoding("o200k_base")` works
unchanged, and re-checks the hash itself on every load.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "bench" / ".cache"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
NPM_PACKAGE = "tiktoken@1.0.22"


def _vocabulary_text(npm_root: Path) -> str:
    """`o200k_base.tiktoken` rebuilt from the npm package's JSON encoder."""
    data = json.loads((npm_root / "encoders" / "o200k_base.json").read_text(encoding="utf-8"))
    ranks: dict[int, str] = {}
    for line in filter(None, data["bpe_ranks"].split("\n")):
        parts = line.split(" ")
        offset = int(parts[1])
        for index, token in enumerate(parts[2:]):
            ranks[offset + index] = token
    return "".join(f"{token} {rank}\n" for rank, token in sorted(ranks.items()))


def _install_vocabulary(directory: Path = CACHE / "tiktoken") -> Path:
    """tiktoken's cache directory holding the checked o200k file (made once)."""
    target = directory / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.is_file():
        return directory
    npm_dir = CACHE / "npm-tiktoken"
    package = npm_dir / "node_modules" / "tiktoken"
    installed = ROOT / "node_modules" / "tiktoken"  # the project's pinned dev dependency
    if (installed / "encoders" / "o200k_base.json").is_file():
        package = installed
    elif not package.is_dir():
        npm_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(npm_dir), NPM_PACKAGE],
            check=True,
            capture_output=True,
        )
    text = _vocabulary_text(package)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != O200K_SHA256:
        raise RuntimeError(f"o200k vocabulary hash {digest} is not the official {O200K_SHA256}")
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return directory


def o200k_counter(directory: Path = CACHE / "tiktoken") -> Callable[[str], int]:
    """A function counting `o200k_base` tokens of a text (special tokens as plain text); the
    vocabulary file is kept in `directory`."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_install_vocabulary(directory))
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))
