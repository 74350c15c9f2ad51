"""The shared preset behaviour (edgegym.core.presets.PresetBase) on every family's shipped presets."""

from __future__ import annotations

import pytest

from edgegym.core.family import shipped_presets
from edgegym.core.presets import PresetBase, plain
from edgegym.families import families

CASES = [pytest.param(fam, name, id=f"{fam.name}-{name}") for fam in families().values()
         for name in shipped_presets(fam.key)]


@pytest.mark.parametrize("fam,name", CASES)
def test_round_trip_and_id(fam, name):
    p = fam.load_preset(name)
    assert isinstance(p, PresetBase)
    assert p.env_id == f"{p.family}-{p.name}-v{p.version}"
    d = p.to_dict()
    assert d == plain(d)  # plain YAML values only (no tuples)
    assert p.replace().to_dict() == d  # a validated copy without overrides holds the same values
    assert p.replace(**{sec: {} for sec in p._sections()}).to_dict() == d
    assert p.replace().source_file == f"{p.source_file} (with overrides)"


@pytest.mark.parametrize("fam", list(families().values()), ids=lambda f: f.name)
def test_replace_errors_name_the_file_and_section(fam):
    p = fam.load_preset(fam.default_preset)
    with pytest.raises(ValueError, match=r"\(with overrides\): unknown section 'nope' \(valid: "):
        p.replace(nope={})
    sec = next(iter(p._sections()))
    with pytest.raises(ValueError, match=rf"\(with overrides\): section '{sec}' must be a mapping"):
        p.replace(**{sec: 3})
    assert p.source_file in str(pytest.raises(ValueError, p.replace, nope={}).value)


def test_plain():
    assert plain((1, (2, 3), {"a": (4,)})) == [1, [2, 3], {"a": [4]}]
