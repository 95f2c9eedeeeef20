"""Who may enter a team's deployment and which routers each may open: the sign-in file's `[auth]` and `[ticketnet]`."""

# The sign-in file is Streamlit's own secrets file: `[auth]` configures `st.login` (OpenID Connect through Authlib),
# `[ticketnet]` says who may enter. Both the server's gate (dashboard/server/gate.py), which answers every request,
# and the script, which checks again on every page, read the signed-in user from the one cookie Streamlit's sign-in
# sets, with this module's rules, so the two can never disagree.

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

# Set by `python -m dashboard --secrets FILE` for the server it starts: the file's absolute path.
SIGN_IN_ENV = "TICKETNET_SIGN_IN"
AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
CALLBACK_PATH = "/oauth2callback"            # the path Streamlit's sign-in answers the provider on
# itsdangerous signs with HMAC-SHA1 over the secret: 32 characters (`python -c "import secrets;
# print(secrets.token_hex(32))"` gives 64) keep it out of reach of guessing.
MIN_COOKIE_SECRET = 32
DEFAULT_SESSION_HOURS = 12.0                 # a working day, then sign in again
MAX_SESSION_HOURS = 30 * 24.0                # the browser drops Streamlit's sign-in cookie after 30 days anyway
USER_COOKIE = "_streamlit_user"              # Streamlit's signed cookie holding the provider's identity claims


LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_local(address: str) -> bool:
    """Whether only this machine can reach a server bound to `address` (loopback, or a unix socket)."""
    return address in LOOPBACK or address.startswith(("127.", "unix://"))


class SignInError(ValueError):
    """A sign-in file that cannot be used, said in one line that names the key to fix."""


@dataclass(frozen=True)
class Access:
    """Who may enter (verified e-mail addresses only) and who may open which router."""

    domains: frozenset[str] = frozenset()    # lower case, without "@": that domain only, no subdomains
    emails: frozenset[str] = frozenset()     # lower case
    routers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)    # router -> e-mails and "@domain"s
    session_hours: float = DEFAULT_SESSION_HOURS

    def admits(self, email: str | None) -> bool:
        return email is not None and (email in self.emails or _domain(email) in self.domains)

    def may_open(self, email: str | None, router: str) -> bool:
        """Whether `email` (an admitted user) may open `router`: a router the file does not list is open to all."""
        if router not in self.routers:
            return self.admits(email)
        return self.admits(email) and any(_matches(email, entry) for entry in self.routers[router])


@dataclass(frozen=True)
class SignIn:
    """A checked sign-in file."""

    path: Path
    access: Access
    cookie_secret: str
    origin: str                              # scheme://host[:port] of redirect_uri: where the cookie is valid


def verified_email(user: Mapping[str, object] | None) -> str | None:
    """The user's e-mail address in lower case, where the provider says it has verified it; else None."""
    if not user:
        return None
    email = user.get("email")
    verified = user.get("email_verified")
    if isinstance(verified, str):            # some providers send the claim as a string
        verified = verified.strip().lower() == "true"
    if verified is not True or not isinstance(email, str) or email.count("@") != 1:
        return None
    return email.strip().lower()


SIGN_IN_NOTE = "Sign in to open the dashboard."
EXPIRED_NOTE = "Your sign-in has expired; sign in again."


def refusal(user: Mapping[str, object], email: str | None) -> tuple[str, str]:
    """What a signed-in user the file does not admit is told, by the gate and by every page alike: (the address
    they signed in as, why it cannot enter), both plain text for the caller to escape."""
    claimed = user.get("email")
    shown = claimed if isinstance(claimed, str) and claimed else "an account without an e-mail"
    why = ("may not open this dashboard. Ask its administrator to add you, or sign in with another account."
           if email is not None else
           "has no e-mail address the provider has verified, so it cannot be admitted.")
    return shown, why


def read_sign_in(path: str | Path) -> SignIn:
    """The sign-in file at `path`, checked; SignInError, in one line, for anything that would not work."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SignInError(f"the sign-in file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SignInError(f"the sign-in file {path} cannot be read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise SignInError(f"the sign-in file {path} is not valid TOML ({e})") from None
    auth = doc.get("auth")
    if not isinstance(auth, dict):
        raise SignInError(f"{path} has no [auth] section: give {', '.join(AUTH_KEYS)} (README, "
                          "'Serving it to your team')")
    nested = sorted(k for k, v in auth.items() if isinstance(v, dict))
    if nested:
        raise SignInError(f"{path}: [auth.{nested[0]}]: one provider only, with its keys directly under [auth]")
    missing = [k for k in AUTH_KEYS if not (isinstance(auth.get(k), str) and auth[k].strip())]
    if missing:
        raise SignInError(f"{path}: [auth] lacks {', '.join(missing)}")
    redirect = urlparse(auth["redirect_uri"])
    if redirect.scheme not in ("http", "https") or not redirect.netloc or redirect.path != CALLBACK_PATH:
        raise SignInError(f"{path}: [auth] redirect_uri must be the address analysts open followed by "
                          f"{CALLBACK_PATH}, for example https://tickets.example.com{CALLBACK_PATH}")
    if urlparse(auth["server_metadata_url"]).scheme not in ("http", "https"):
        raise SignInError(f"{path}: [auth] server_metadata_url must be the provider's "
                          ".well-known/openid-configuration URL")
    if len(auth["cookie_secret"]) < MIN_COOKIE_SECRET:
        raise SignInError(f"{path}: [auth] cookie_secret must have at least {MIN_COOKIE_SECRET} characters "
                          "(python -c \"import secrets; print(secrets.token_hex(32))\")")
    return SignIn(path=path.resolve(), access=_read_access(path, doc.get("ticketnet")),
                  cookie_secret=auth["cookie_secret"], origin=f"{redirect.scheme}://{redirect.netloc}")


def _read_access(path: Path, section: object) -> Access:
    if not isinstance(section, dict):
        raise SignInError(f"{path} has no [ticketnet] section: say who may enter with allowed_domains "
                          "and/or allowed_emails")
    domains = [_domain_entry(path, d) for d in _strings(path, section, "allowed_domains")]
    emails = [_email_entry(path, "allowed_emails", e) for e in _strings(path, section, "allowed_emails")]
    if not domains and not emails:
        raise SignInError(f"{path}: [ticketnet] must name who may enter: allowed_domains = [\"example.com\"] "
                          "and/or allowed_emails = [\"ana@example.com\"]")
    hours = section.get("session_hours", DEFAULT_SESSION_HOURS)
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 < hours <= MAX_SESSION_HOURS:
        raise SignInError(f"{path}: [ticketnet] session_hours must be a number of hours between 0 and "
                          f"{MAX_SESSION_HOURS:.0f}")
    routers = section.get("routers", {})
    if not isinstance(routers, dict):
        raise SignInError(f"{path}: [ticketnet.routers] must be a table: \"router name\" = [\"@domain\", "
                          "\"ana@example.com\"]")
    unknown = sorted(set(section) - {"allowed_domains", "allowed_emails", "session_hours", "routers"})
    if unknown:
        raise SignInError(f"{path}: [ticketnet] has an unknown key {unknown[0]!r}")
    rules = {}
    for name, entries in routers.items():
        key = f"routers.{json.dumps(name)}"
        if not isinstance(entries, list) or not entries or not all(isinstance(e, str) for e in entries):
            raise SignInError(f"{path}: [ticketnet] {key} must be a list of e-mails and \"@domain\"s")
        rules[name] = tuple("@" + _domain_entry(path, e[1:]) if e.startswith("@") else _email_entry(path, key, e)
                            for e in entries)
    return Access(domains=frozenset(domains), emails=frozenset(emails), routers=rules, session_hours=float(hours))


def _strings(path: Path, section: dict, key: str) -> list[str]:
    value = section.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SignInError(f"{path}: [ticketnet] {key} must be a list of strings")
    return value


def _domain_entry(path: Path, value: str) -> str:
    domain = value.strip().lower().removeprefix("@")
    if not domain or "." not in domain or any(c in domain for c in "@/ ") or domain.startswith("."):
        raise SignInError(f"{path}: [ticketnet] {value!r} is not a domain (for example example.com)")
    return domain


def _email_entry(path: Path, key: str, value: str) -> str:
    email = value.strip().lower()
    local, _, domain = email.partition("@")
    if not local or not domain or "@" in domain or " " in email:
        raise SignInError(f"{path}: [ticketnet] {key}: {value!r} is not an e-mail address")
    return email


def _domain(email: str) -> str:
    return email.rpartition("@")[2]


def _matches(email: str | None, entry: str) -> bool:
    if email is None:
        return False
    return _domain(email) == entry[1:] if entry.startswith("@") else email == entry


@cache
def _read_cached(path: str) -> SignIn:
    return read_sign_in(path)


def current(environ: Mapping[str, str] = os.environ) -> SignIn | None:
    """The sign-in this server runs with (the launcher names its file in TICKETNET_SIGN_IN); None without sign-in."""
    path = environ.get(SIGN_IN_ENV)
    return _read_cached(path) if path else None


def signed_in_user(cookies: Mapping[str, str], sign_in: SignIn) -> dict | None:
    """The identity claims in Streamlit's sign-in cookie, where its signature holds, it is younger than the session
    lifetime and it was issued for this deployment's address; None otherwise (signed out, expired or forged)."""
    from streamlit.auth_util import get_cookie_with_chunks
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    max_age_days = sign_in.access.session_hours / 24

    def one(name: str) -> bytes | None:
        raw = cookies.get(name)
        if raw is None:
            return None
        # HTTP cookies are ISO-8859-1: the bytes the signature was made over come back through latin-1.
        return decode_signed_value(sign_in.cookie_secret, name, raw.encode("latin-1"), max_age_days=max_age_days)

    try:
        decoded = get_cookie_with_chunks(one, USER_COOKIE)
        payload = json.loads(decoded) if decoded else None
    except (ValueError, UnicodeError):
        return None
    if not isinstance(payload, dict) or payload.get("origin") != sign_in.origin or payload.get("is_logged_in") is not True:
        return None
    return payload


def has_sign_in_cookie(cookies: Mapping[str, str]) -> bool:
    """Whether the browser sent a sign-in cookie at all (so a refused one reads as expired, not as never signed in)."""
    return USER_COOKIE in cookies
