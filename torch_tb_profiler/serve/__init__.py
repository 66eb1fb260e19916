"""The profiler without TensorBoard: ``torch-tb-profiler serve`` (``server``: the app's routes behind a
waitress WSGI server, optionally under a path prefix) and the notebook display (``notebook.show``)."""
