"""A PEP 517 build backend in the standard library only: it writes a pure-Python wheel (and an
sdist) of src/ticketd_client, so the package installs where no package index can be reached
(ticketd's CI has none). It reads its name and version from pyproject.toml's [project] table."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Any, Dict, List, Optional

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "ticketd_client"


def _project() -> Dict[str, str]:
    text = open(os.path.join(_ROOT, "pyproject.toml"), encoding="utf-8").read()
    table = text.split("[project]", 1)[1]
    keys = ("name", "version", "description", "requires-python")
    found = {key: re.search(rf'^{key}\s*=\s*"([^"]*)"', table, re.M) for key in keys}
    return {key: m.group(1) for key, m in found.items() if m is not None}


def _dist_name(project: Dict[str, str]) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project: Dict[str, str]) -> str:
    readme = open(os.path.join(_ROOT, "README.md"), encoding="utf-8").read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {project['name']}\n"
        f"Version: {project['version']}\n"
        f"Summary: {project.get('description', '')}\n"
        "License: MIT\n"
        f"Requires-Python: {project.get('requires-python', '>=3.9')}\n"
        "Description-Content-Type: text/markdown\n\n"
        f"{readme}"
    )


def _sources() -> List[str]:
    base = os.path.join(_ROOT, "src")
    found = []
    for folder, _, files in os.walk(os.path.join(base, _PACKAGE)):
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                found.append(os.path.relpath(os.path.join(folder, name), base))
    return sorted(found)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(
    wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None
) -> str:
    project = _project()
    dist = _dist_name(project)
    info = f"{dist}-{project['version']}.dist-info"
    name = f"{dist}-{project['version']}-py3-none-any.whl"
    files: Dict[str, bytes] = {}
    for rel in _sources():
        with open(os.path.join(_ROOT, "src", rel), "rb") as f:
            files[rel.replace(os.sep, "/")] = f.read()
    files[f"{info}/METADATA"] = _metadata(project).encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: ticketd-client _build/backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return name


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as sdist:
        members = ["pyproject.toml", "README.md", os.path.join("_build", "backend.py")]
        for rel in members + [os.path.join("src", s) for s in _sources()]:
            sdist.add(os.path.join(_ROOT, rel), arcname=f"{base}/{rel}")
        pkg_info = _metadata(project).encode()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(pkg_info)
        sdist.addfile(entry, io.BytesIO(pkg_info))
    return name
