"""`toolmode view`: look at run traces and bench folders in a browser, served on 127.0.0.1.

Nothing here is imported by `import toolmode` or `toolmode --help`; the `view` command loads it.
Modules: `jsonlines` (bounded, seeking line reads and safe JSON), `loader` (a trace file to the plain
structure the page shows), `timeline` (one run's events to its steps and messages), `highlight` (Python
code to tokens), `folder` (the served folder: safe paths, the walk, the cached list of runs), `benchpage`
(a bench folder's tables and charts, made by the bench's own code), `server` (the HTTP server), `cli` (the
command), `static/` (the page: HTML, CSS and the script that builds it with textContent).
"""
