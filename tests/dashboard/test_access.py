"""Who may enter and which routers each may open: the sign-in file's rules, and the cookie they are read from."""

from __future__ import annotations

import pytest

from dashboard import access
from tests.dashboard.signin_helpers import ORIGIN, SECRET, user_cookie, write_sign_in


def test_a_valid_file_gives_its_rules_in_lower_case(tmp_path):
    path = write_sign_in(tmp_path, 'allowed_domains = ["Example.com", "@it.example.org"]\n'
                                   'allowed_emails = ["Bob@Partner.net"]\nsession_hours = 2\n'
                                   '[ticketnet.routers]\n"help desk" = ["@it.example.org", "Ana@Example.com"]\n')
    sign_in = access.read_sign_in(path)
    assert sign_in.access.domains == {"example.com", "it.example.org"}
    assert sign_in.access.emails == {"bob@partner.net"}
    assert sign_in.access.routers == {"help desk": ("@it.example.org", "ana@example.com")}
    assert sign_in.access.session_hours == 2.0
    assert sign_in.cookie_secret == SECRET and sign_in.origin == ORIGIN and sign_in.path == path.resolve()


def test_who_may_enter_is_an_exact_address_or_an_exact_domain():
    rules = access.Access(domains=frozenset({"example.com"}), emails=frozenset({"bob@partner.net"}))
    assert rules.admits("ana@example.com") and rules.admits("bob@partner.net")
    assert not rules.admits("eve@sub.example.com")          # no subdomains
    assert not rules.admits("eve@example.com.evil.net")
    assert not rules.admits("carol@partner.net") and not rules.admits(None)


def test_a_router_listed_opens_only_to_its_entries_and_one_not_listed_to_every_allowed_user():
    rules = access.Access(domains=frozenset({"example.com", "it.example.com"}),
                          routers={"helpdesk": ("@it.example.com", "ana@example.com")})
    assert rules.may_open("ana@example.com", "helpdesk") and rules.may_open("joe@it.example.com", "helpdesk")
    assert not rules.may_open("bob@example.com", "helpdesk")
    assert rules.may_open("bob@example.com", "brightwave")
    assert not rules.may_open("eve@other.org", "brightwave")          # not admitted at all
    assert not rules.may_open(None, "helpdesk")


@pytest.mark.parametrize(("claims", "expected"), [
    ({"email": "Ana@Example.com", "email_verified": True}, "ana@example.com"),
    ({"email": "ana@example.com", "email_verified": "true"}, "ana@example.com"),
    ({"email": "ana@example.com", "email_verified": False}, None),
    ({"email": "ana@example.com"}, None),                               # no claim: not verified
    ({"email": "ana@example.com", "email_verified": "yes"}, None),
    ({"email_verified": True}, None),
    ({"email": "not-an-address", "email_verified": True}, None),
    (None, None),
])
def test_only_an_address_the_provider_has_verified_counts(claims, expected):
    assert access.verified_email(claims) == expected


@pytest.mark.parametrize(("ticketnet", "auth", "said"), [
    ("", None, "must name who may enter"),
    ('allowed_domains = ["example"]\n', None, "is not a domain"),
    ('allowed_emails = ["ana"]\n', None, "is not an e-mail address"),
    ('allowed_domains = "example.com"\nsession_hours = 0\n', None, "session_hours"),
    ('allowed_domains = ["example.com"]\nsession_hours = true\n', None, "session_hours"),
    ('allowed_domains = ["example.com"]\nallowed_users = ["x"]\n', None, "unknown key 'allowed_users'"),
    ('allowed_domains = ["example.com"]\n[ticketnet.routers]\nhelpdesk = []\n', None, 'routers."helpdesk"'),
    ('allowed_domains = ["example.com"]\n[ticketnet.routers]\nhelpdesk = ["ana"]\n', None, "not an e-mail"),
    ('allowed_domains = ["example.com"]\n', 'client_id = "x"\n', "[auth] lacks redirect_uri, cookie_secret"),
    ('allowed_domains = ["example.com"]\n',
     ('redirect_uri = "http://h/"\ncookie_secret = "' + "s" * 40 + '"\nclient_id = "a"\nclient_secret = "b"\n'
      'server_metadata_url = "http://p/.well-known/openid-configuration"\n'), "/oauth2callback"),
    ('allowed_domains = ["example.com"]\n',
     ('redirect_uri = "http://h/oauth2callback"\ncookie_secret = "short"\nclient_id = "a"\nclient_secret = "b"\n'
      'server_metadata_url = "http://p/.well-known/openid-configuration"\n'), "at least 32 characters"),
    ('allowed_domains = ["example.com"]\n',
     'redirect_uri = "http://h/oauth2callback"\ncookie_secret = "' + "s" * 40 + '"\n[auth.google]\nclient_id = "a"\n',
     "one provider only"),
])
def test_a_file_that_would_not_work_is_refused_in_one_line(tmp_path, ticketnet, auth, said):
    path = write_sign_in(tmp_path, ticketnet, auth)
    with pytest.raises(access.SignInError) as err:
        access.read_sign_in(path)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_a_missing_or_broken_file_is_refused_in_one_line(tmp_path):
    for path, said in ((tmp_path / "none.toml", "does not exist"), (tmp_path / "bad.toml", "not valid TOML")):
        if path.name == "bad.toml":
            path.write_text("[auth\n")
        with pytest.raises(access.SignInError, match=said) as err:
            access.read_sign_in(path)
        assert "\n" not in str(err.value)
    (tmp_path / "noauth.toml").write_text('[ticketnet]\nallowed_domains = ["example.com"]\n')
    with pytest.raises(access.SignInError, match=r"no \[auth\] section"):
        access.read_sign_in(tmp_path / "noauth.toml")


def test_the_cookie_is_read_only_where_its_signature_origin_and_age_hold(tmp_path, monkeypatch):
    sign_in = access.read_sign_in(write_sign_in(tmp_path, 'allowed_domains = ["example.com"]\nsession_hours = 1\n'))
    good = {"_streamlit_user": user_cookie()}
    assert access.signed_in_user(good, sign_in)["email"] == "ana@example.com"
    assert access.signed_in_user({}, sign_in) is None
    assert access.signed_in_user({"_streamlit_user": user_cookie(secret="x" * 48)}, sign_in) is None    # forged
    assert access.signed_in_user({"_streamlit_user": user_cookie(origin="http://elsewhere:8501")}, sign_in) is None
    assert access.signed_in_user({"_streamlit_user": "garbage"}, sign_in) is None
    value = good["_streamlit_user"]
    tampered = value[:10] + ("A" if value[10] != "A" else "B") + value[11:]           # one byte of the payload
    assert access.signed_in_user({"_streamlit_user": tampered}, sign_in) is None

    import time

    import itsdangerous.timed

    now = time.time()
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now - 2 * 3600)     # signed two hours ago
    old = {"_streamlit_user": user_cookie()}
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: now)
    assert access.signed_in_user(old, sign_in) is None                               # past session_hours = 1
    assert access.has_sign_in_cookie(old)


def test_a_chunked_cookie_is_put_back_together(tmp_path):
    import hashlib

    from streamlit.auth_util import set_cookie_with_chunks
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    sign_in = access.read_sign_in(write_sign_in(tmp_path))
    jar: dict[str, str] = {}
    payload = {"email": "ana@example.com", "email_verified": True, "origin": ORIGIN, "is_logged_in": True,
               "groups": [hashlib.sha256(bytes([i % 256, i // 256])).hexdigest()[:16] for i in range(600)]}
    set_cookie_with_chunks(lambda name, value: jar.__setitem__(name, create_signed_value(SECRET, name, value)
                                                               .decode("latin-1")),
                           lambda name, value: create_signed_value(SECRET, name, value), "_streamlit_user", payload,
                           cookie_attr_size=60)
    assert len(jar) > 1                                                 # too large for one cookie
    assert access.signed_in_user(jar, sign_in)["groups"] == payload["groups"]


@pytest.mark.parametrize(("address", "local"), [("localhost", True), ("127.0.0.1", True), ("::1", True),
                                                ("unix:///tmp/s", True), ("0.0.0.0", False), ("10.0.0.5", False),
                                                ("", False)])
def test_which_addresses_only_this_machine_reaches(address, local):
    assert access.is_local(address) is local
