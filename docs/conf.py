"""Sphinx configuration of edgegym's documentation site (MyST markdown + autodoc).

Build (warnings are errors, as in CI)::

    pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The reference tables (observation features, env ids, policies, CLI help, API) are generated from the code into
the Markdown pages themselves by ``python docs/_ext/edgegym_docs.py --write``; as an extension here, that module
warns about every page that differs from what the code generates (an error with ``-W``).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "_ext"))

import edgegym  # noqa: E402

project = "edgegym"
author = "edgegym contributors"
copyright = "edgegym contributors"
release = version = edgegym.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "edgegym_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# result folders hold bench outputs (a summary.md per run: raw tables, not pages); other .md files in them are
# pages (e.g. results/agents/history_v0.md), listed by the hidden toctree of index.md
exclude_patterns = ["_build", "results/**/summary.md", "**/.*"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "dollarmath"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
html_theme = "alabaster"
html_title = f"edgegym {version}"
html_theme_options = {"description": "Gymnasium envs for edge-cloud ML scheduling", "fixed_sidebar": True,
                      "page_width": "1280px", "sidebar_width": "250px", "body_max_width": "none"}
