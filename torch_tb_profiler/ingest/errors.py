"""What a profile lookup could not serve, in the loader's own words; the plugin maps them to HTTP codes."""


class LookupFailed(Exception):
    """Base of the lookup errors; ``str(e)`` is a message for the user."""


class NotFound(LookupFailed):
    """No such run, worker or span, or the file is still loading or could not be loaded (HTTP 404)."""


class Ambiguous(LookupFailed):
    """The selection names more than one profile (e.g. a worker with several spans and no span given; HTTP 400)."""
