"""Root's home is a home too: ``~/a.py`` in a session run in ``/root/proj`` is
``/root/a.py`` (Pi's tools open it there), so the Files table keys them as one file, and the
page writes ``/root/…`` as ``~/…`` as it does ``/home/alice/…``."""

from __future__ import annotations

import posixpath
from pathlib import Path

from test_tools_s66 import SPELLINGS, _pi

from exporter.render import display_path
from exporter.render.files_touched import file_key

ROOT_SPELLINGS = [*SPELLINGS, "/root/proj/a.py", "~/proj/b.py", "/root/proj/b.py"]


def test_root_s_home_is_keyed_as_pi_opens_it(pi_pkg: Path) -> None:
    cwd = "/root/proj"
    resolved = _pi(pi_pkg, {"cwd": cwd, "paths": ROOT_SPELLINGS}, home="/root")
    keys = [file_key(path, cwd) for path in ROOT_SPELLINGS]
    assert keys == list(map(posixpath.normpath, resolved))
    assert file_key("~/proj/b.py", cwd) == file_key("/root/proj/b.py", cwd)


def test_root_s_home_reads_as_a_home_on_the_page() -> None:
    assert display_path("/root/proj/a.py") == "~/proj/a.py"
    assert display_path("/root/proj", owner_home="/home/alice") == "~root/proj"
    assert display_path("/root", owner_home="/root") == "~"
    assert display_path("/rootfs/a.py") == "/rootfs/a.py"  # not a home: another folder
    assert file_key("~/a.py", "/rootfs/p") != file_key("/rootfs/a.py", "/rootfs/p")
