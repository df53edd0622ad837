# The Sphinx (MyST) site of tests/docs_stacks.rs; the test copies examples.md and the npm
# package's dist/ (as _static/svclab/) in before `sphinx-build`.
project = "svclab on Sphinx"
extensions = ["myst_parser"]
html_static_path = ["_static"]
# Pygments has no `svclab` or `expected` lexer; the blocks stay plain text.
suppress_warnings = ["misc.highlighting_failure"]
# The one line svclab needs:
html_js_files = [("svclab/svclab-example.js", {"type": "module"})]
