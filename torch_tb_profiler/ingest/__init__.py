"""The ingest half: find trace files (local or cloud), read and parse them into profiles, keep them loaded.

Nothing here imports the HTTP layer (``views``); ``errors`` says what a lookup could not serve and the
plugin turns that into a status code.
"""
