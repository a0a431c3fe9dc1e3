"""Where a model call goes: the API it speaks, the server, and the variable holding the key.

Each selector and judge names its own `Endpoint`, so one run can put a Claude judge
over a selector served by Ollama. The endpoint (transport plus normalised base URL)
scopes every cache and cassette key, so no server's answer is served as another's.
Only the *name* of the key's environment variable is held, never the key, so specs,
rows, caches and reports cannot leak it.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from memeval.errors import MemevalError

Transport = Literal["anthropic", "openai"]
TRANSPORTS: tuple[Transport, ...] = ("anthropic", "openai")

PUBLIC_URLS: dict[str, str] = {"anthropic": "https://api.anthropic.com",
                               "openai": "https://api.openai.com/v1"}
BASE_URL_ENVS: dict[str, str] = {"anthropic": "ANTHROPIC_BASE_URL",
                                 "openai": "OPENAI_BASE_URL"}
KEY_ENVS: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"  # a bearer token the anthropic SDK also accepts
NO_KEY = "no-key-needed"  # local servers need no key, but the SDKs insist on one
_DEFAULT_PORTS = {"http": 80, "https": 443}
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}")  # keys are mixed case; variable names not
CACHE_SCOPE = "memeval-cache-2"  # bump to retire every cached answer at once
FAKE_SERVER_HEADER = "x-memeval-fake-server"  # memeval's loopback test server marks answers


# A path segment that is a key: a provider's key prefix, or a long token mixing upper
# and lower case with digits (hex ids and UUIDs, which gateways put in paths, do not).
_KEY_PREFIX = re.compile(r"^(sk|pk|rk|gsk|xai|hf|key|api[-_]?key|token)[-_]", re.IGNORECASE)
_LONG_TOKEN = re.compile(r"^[A-Za-z0-9_\-.~]{32,}$")


def _looks_like_key(segment: str) -> bool:
    if _KEY_PREFIX.match(segment) and len(segment) >= 12:
        return True
    return bool(_LONG_TOKEN.match(segment)) and any(c.isupper() for c in segment) \
        and any(c.islower() for c in segment) and any(c.isdigit() for c in segment)


def _known_keys() -> list[str]:
    """The keys in the environment (long enough to be real), which no URL may carry."""
    names = [*KEY_ENVS.values(), AUTH_TOKEN_ENV]
    return [v for v in (os.environ.get(n) for n in names) if v and len(v) >= 16]


def normalise_url(url: str, source: str = "base_url") -> str:
    """One spelling per server: lowercase scheme and host, no default port, no trailing `/`.

    Raises MemevalError for anything but `http(s)://host[:port][/path]`, and for a URL
    that carries a key anywhere (user info, query, fragment, a path segment): a base
    URL is written into config.json, rows, the summary, the report and the CLI's
    output. The message names `source` (the option or variable) and never echoes
    more than the scheme and host.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    shown = f"{source} {scheme}://{parts.hostname or '?'}"  # never echo a secret
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise MemevalError(f"{shown}…: expected http(s)://host[:port][/path]")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise MemevalError(f"{shown}…: put no credentials, query or fragment in the URL "
                           "(it is written into results); name the variable holding the "
                           "key with api_key_env=NAME")
    if any(_looks_like_key(unquote(seg)) for seg in parts.path.split("/")) \
            or any(key in url or quote(key, safe="") in url for key in _known_keys()):
        raise MemevalError(f"{shown}…: its path holds what looks like a key (it would be "
                           "written into results and printed); give the server's URL "
                           "without it and name the variable holding the key with "
                           "api_key_env=NAME")
    host = parts.hostname.lower()
    try:
        port = parts.port
    except ValueError as exc:
        raise MemevalError(f"base_url {url!r}: {exc}") from None
    host = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class Endpoint:
    """A model server as a selector or judge asks for it.

    Args:
        transport: `anthropic` (Messages API) or `openai` (Chat Completions API).
        base_url: the server; None resolves to the transport's environment variable
            (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`), then the provider's public API.
        api_key_env: the environment variable holding the key; None means the
            transport's usual one (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`).
    """

    transport: Transport = "anthropic"
    base_url: str | None = None
    api_key_env: str | None = None

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise MemevalError(f"transport {self.transport!r}: use one of "
                               f"{', '.join(TRANSPORTS)}")
        if self.base_url is not None:
            object.__setattr__(self, "base_url", normalise_url(self.base_url))
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            raise MemevalError(f"api_key_env={self.api_key_env[:4]}…: give the NAME of an "
                               "environment variable (capitals, digits, '_', as "
                               "OPENROUTER_API_KEY), never the key")

    @property
    def url(self) -> str:
        """The server calls go to, as the SDK resolves it: option, variable, public API."""
        if self.base_url is not None:
            return self.base_url
        variable = BASE_URL_ENVS[self.transport]
        return normalise_url(os.environ.get(variable) or PUBLIC_URLS[self.transport],
                             f"${variable}")

    @property
    def key_env(self) -> str:
        """The variable the key is read from."""
        return self.api_key_env or KEY_ENVS[self.transport]

    @property
    def public(self) -> bool:
        """Is this the provider's own API (which needs a key and bills)?"""
        return self.url == normalise_url(PUBLIC_URLS[self.transport])

    @property
    def local(self) -> bool:
        """Is the server on this machine (a loopback address)?"""
        host = urlsplit(self.url).hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def api_key(self) -> str | None:
        """The key to send, read from the environment at call time.

        A variable the spec named is the only source: unset, a placeholder is sent, never
        another account's key the SDK would find on its own. Otherwise None lets the
        anthropic SDK use `ANTHROPIC_AUTH_TOKEN`, and a server other than the provider's
        own gets the placeholder (local servers need no key).
        """
        key = os.environ.get(self.key_env)
        if key or self.api_key_env:
            return key or NO_KEY
        if self.transport == "anthropic" and os.environ.get(AUTH_TOKEN_ENV):
            return None
        return None if self.public else NO_KEY

    def has_access(self) -> bool:
        """Could a call get through without a cassette? A key in the variable (the named
        one must be set), an auth token for Anthropic, or a server on this machine
        (remote servers other than the providers' are assumed to want a key)."""
        if os.environ.get(self.key_env):
            return True
        if self.api_key_env:
            return False
        if self.transport == "anthropic" and os.environ.get(AUTH_TOKEN_ENV):
            return True
        return self.local

    def scope(self, key: str) -> str:
        """A request key scoped to this server, so a cache never serves one server's
        answers as another's. Every server is scoped, Anthropic's own too, so entries
        that older versions stored under bare keys are never served again."""
        return hashlib.sha256(
            f"{CACHE_SCOPE}\x1f{self.transport}\x1f{self.url}\x1f{key}".encode()).hexdigest()

    def label(self) -> str:
        """`transport url`, for messages and config.json (never the key)."""
        return f"{self.transport} {self.url}"


ANTHROPIC = Endpoint()
