"""What every family's preset dataclass shares: its Gymnasium id, its plain mapping and validated copies.

A family's preset is a frozen dataclass (slots) with the top-level fields ``name``, ``family``, ``version``,
``description``, ``source_file`` and one dataclass per section. It subclasses :class:`PresetBase` and says
which sections it has and how a mapping is validated into a preset::

    @dataclass(frozen=True, slots=True)
    class MyPreset(PresetBase):
        name: str
        ...
        def _sections(self): return _SECTIONS          # section name -> section dataclass
        def _from_dict(self, data, source): return preset_from_dict(data, source=source)
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["PresetBase", "TOP_KEYS", "plain"]

#: the top-level keys of every preset file (besides its sections)
TOP_KEYS = ("name", "family", "version", "description")


def plain(x: Any) -> Any:
    """``x`` with tuples turned into lists, recursively (the YAML form of a preset value)."""
    if isinstance(x, tuple | list):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


class PresetBase:
    """Mixin of the family preset dataclasses: :attr:`env_id`, :meth:`to_dict`, :meth:`replace`."""

    __slots__ = ()

    # ---------------------------------------------------------------- hooks a family provides
    def _sections(self) -> dict:
        """Section name -> section dataclass, in file order."""
        raise NotImplementedError

    def _from_dict(self, data: dict, source: str):
        """Validate a preset mapping into a preset (the family's ``preset_from_dict``)."""
        raise NotImplementedError

    def _override_base(self, section: str, base: dict, overrides: dict) -> dict:
        """The section's current values before ``overrides`` are laid over them (a family drops here the keys
        an override makes meaningless, e.g. one of two alternative keys)."""
        return base

    # ---------------------------------------------------------------- shared behaviour
    @property
    def env_id(self) -> str:
        """The Gymnasium id of this preset: ``<family>-<name>-v<version>``."""
        return f"{self.family}-{self.name}-v{self.version}"

    def to_dict(self) -> dict:
        """The preset as a plain mapping (tuples as lists), the inverse of the family's ``preset_from_dict``."""
        out: dict[str, Any] = {k: getattr(self, k) for k in TOP_KEYS}
        for sec in self._sections():
            obj = getattr(self, sec)
            out[sec] = {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return out

    def replace(self, **sections: dict):
        """A copy with some keys of some sections overridden, validated like a file, e.g.
        ``preset.replace(workload={"num_jobs": 50})``. An unknown section or a section that is not a mapping is a
        ``ValueError`` naming the preset's file."""
        src = f"{self.source_file} (with overrides)"
        names = self._sections()
        data = self.to_dict()
        for sec, over in sections.items():
            if sec not in names:
                raise ValueError(f"{src}: unknown section '{sec}' (valid: {', '.join(names)})")
            if not isinstance(over, dict):
                raise ValueError(f"{src}: section '{sec}' must be a mapping of keys to values, got {over!r}")
            data[sec] = {**self._override_base(sec, dict(data[sec]), over), **over}
        return self._from_dict(data, src)
