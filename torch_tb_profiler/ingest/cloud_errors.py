"""StorageError and the translation of cloud-client exceptions into clear messages.

s3fs, adlfs and gcsfs each raise their own exception types (botocore, azure-core, aiohttp, google-auth).
They are matched here by class name along the MRO, so this module imports none of those libraries.
"""

from __future__ import annotations


class StorageError(Exception):
    """A logdir cannot be listed or a file cannot be fetched (credentials, missing bucket, network...).

    The message is meant for users as is; discovery shows it as a run-level error and retries on the
    next scan.
    """


class MissingExtraError(StorageError):
    """The fsspec backend of a URL scheme is not installed."""


# Hints appended to credential errors, per protocol family.
_CREDENTIAL_HINTS = {
    "s3": "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the key/secret storage options",
    "az": "check AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN",
    "gs": "check GOOGLE_APPLICATION_CREDENTIALS (application-default credentials) or the token storage option",
}

_AUTH_NAMES = {
    "PermissionError",
    "NoCredentialsError",
    "PartialCredentialsError",
    "ClientAuthenticationError",
    "CredentialUnavailableError",
    "DefaultCredentialsError",
    "RefreshError",
}
_AUTH_CODES = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "ExpiredToken",
    "InvalidToken",
    "AuthenticationFailed",
    "AuthorizationFailure",
    "AuthorizationPermissionMismatch",
}
_MISSING_NAMES = {"FileNotFoundError", "ResourceNotFoundError", "NoSuchBucket"}
_MISSING_CODES = {"NoSuchBucket", "ContainerNotFound", "BlobNotFound", "NoSuchKey"}
_NETWORK_NAMES = {
    "ConnectionError",
    "TimeoutError",
    "ClientConnectorError",
    "ClientConnectionError",
    "ServerDisconnectedError",
    "EndpointConnectionError",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ServiceRequestError",
    "ServiceResponseError",
    "TransportError",
    "gaierror",
}


def family(protocol: str) -> str:
    """'s3', 'az' or 'gs' for the protocols of the three cloud backends, else the protocol itself."""
    if protocol in ("s3", "s3a"):
        return "s3"
    if protocol in ("az", "abfs", "abfss", "adl"):
        return "az"
    if protocol in ("gs", "gcs"):
        return "gs"
    return protocol


def classify(exc: BaseException) -> str:
    """'credentials', 'missing', 'network' or 'other' for an exception raised by a cloud client."""
    seen: set[int] = set()
    current: BaseException | None = exc
    # Walk the cause chain too: s3fs and adlfs often wrap the client error.
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = {cls.__name__ for cls in type(current).__mro__}
        code = _error_code(current)
        status = _status(current)
        if names & _AUTH_NAMES or code in _AUTH_CODES or status in (401, 403):
            return "credentials"
        if names & _MISSING_NAMES or code in _MISSING_CODES or status == 404:
            return "missing"
        if names & _NETWORK_NAMES:
            return "network"
        current = current.__cause__ or current.__context__
    return "other"


def _error_code(exc: BaseException) -> str:
    code = getattr(exc, "error_code", None)  # azure-core
    if code is None:
        response = getattr(exc, "response", None)  # botocore ClientError
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
    return str(code or "")


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):  # azure-core, gcsfs HttpError, aiohttp
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    return None


def translate(exc: BaseException, action: str, url: str, protocol: str) -> StorageError:
    """A StorageError whose message says what failed, why, and what to check."""
    if isinstance(exc, StorageError):
        return exc
    kind = classify(exc)
    detail = _short(exc)
    fam = family(protocol)
    if kind == "credentials":
        hint = _CREDENTIAL_HINTS.get(fam, "check the credentials")
        msg = f"cannot {action} {url}: access denied or invalid credentials ({hint}): {detail}"
    elif kind == "missing":
        what = "container" if fam == "az" else "bucket"
        msg = f"cannot {action} {url}: the {what} or path does not exist: {detail}"
    elif kind == "network":
        msg = f"cannot {action} {url}: network error (is the endpoint reachable?): {detail}"
    else:
        msg = f"cannot {action} {url}: {type(exc).__name__}: {detail}"
    return StorageError(msg)


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
