"""Accounts and sessions through the official SDK: sign-up, email sessions, the current user, session management."""
from appwrite.id import ID
from appwrite.services.account import Account

from harness import KEY, PROJECT, check, client, expect_equal, expect_error, unique_email

PASSWORD = "password123"


def new_account(name="Alice"):
    """Signs up a user as a guest and returns (user, email)."""
    email = unique_email()
    user = Account(client()).create(user_id=ID.unique(), email=email, password=PASSWORD, name=name)
    return user, email


def signed_in(email):
    """A user client over a session minted by email sign-in under the API key (the SDK keeps no cookies)."""
    session = Account(client(key=KEY)).create_email_password_session(email=email, password=PASSWORD)
    assert session.secret, "a session created under an API key carries its secret"
    return client(session=session.secret), session


@check
def sign_up_returns_the_user():
    user, email = new_account()
    expect_equal(len(user.id), 20, "ID.unique() answered with a 20-hex ID")
    expect_equal(user.email, email, "email")
    expect_equal(user.name, "Alice", "name")
    expect_equal(user.status, True, "status")
    expect_equal(user.prefs.data if hasattr(user.prefs, "data") else user.to_dict()["prefs"], {}, "prefs")
    assert user.registration.endswith("+00:00") and "." in user.registration, user.registration
    custom = Account(client()).create(user_id=ID.custom(f"c-{user.id[:8]}"), email=unique_email(), password=PASSWORD)
    expect_equal(custom.id, f"c-{user.id[:8]}", "custom ID")


@check
def sign_up_errors():
    user, email = new_account()
    account = Account(client())
    expect_error("user_already_exists", 409, account.create, user_id=ID.unique(), email=email, password=PASSWORD)
    expect_error("user_already_exists", 409, account.create, user_id=ID.custom(user.id), email=unique_email(), password=PASSWORD)
    expect_error("general_argument_invalid", 400, account.create, user_id=ID.unique(), email="not-an-email", password=PASSWORD)
    expect_error("general_argument_invalid", 400, account.create, user_id=ID.unique(), email=unique_email(), password="short")
    expect_error("general_argument_invalid", 400, account.create, user_id=ID.custom("_bad"), email=unique_email(), password=PASSWORD)


@check
def guest_email_session_has_no_secret_in_the_body():
    _, email = new_account()
    session = Account(client()).create_email_password_session(email=email, password=PASSWORD)
    expect_equal(session.secret, "", "secret for a guest")
    expect_equal(session.current, True, "current")
    expect_equal(session.provider, "email", "provider")
    expect_equal(session.factors, ["password"], "factors")
    expect_equal(session.mfaupdatedat, "", "mfaUpdatedAt")


@check
def keyed_email_session_signs_the_user_in():
    user, email = new_account()
    user_client, session = signed_in(email)
    expect_equal(session.userid, user.id, "session userId")
    me = Account(user_client).get()
    expect_equal((me.id, me.email), (user.id, email), "account.get()")
    # The same secret works as the session cookie.
    me = Account(client(cookie=f"a_session_{PROJECT}={session.secret}")).get()
    expect_equal(me.id, user.id, "account.get() over the cookie")


@check
def email_session_errors():
    _, email = new_account()
    account = Account(client())
    expect_error("user_invalid_credentials", 401, account.create_email_password_session, email=email, password="password124")
    expect_error("user_invalid_credentials", 401, account.create_email_password_session, email=unique_email(), password=PASSWORD)
    expect_error("general_argument_invalid", 400, account.create_email_password_session, email=email, password=PASSWORD,
                 duration=10)


@check
def guests_and_keys_are_not_users():
    expect_error("general_unauthorized_scope", 401, Account(client()).get)
    expect_error("general_unauthorized_scope", 401, Account(client(key=KEY)).get)
    expect_error("general_unauthorized_scope", 401, Account(client()).list_sessions)
    expect_error("general_unauthorized_scope", 401, Account(client(session="sesame_ss_not-a-session")).get)
    expect_error("general_unauthorized_scope", 401, Account(client(key="sesame_sk_unknown")).create_email_password_session,
                 email=unique_email(), password=PASSWORD)


@check
def unknown_project_and_route():
    expect_error("project_not_found", 404, Account(client(project="no-such-project")).get)
    c = client()
    expect_error("general_route_not_found", 404, c.call, "get", "/no/such/route",
                 {"X-Appwrite-Project": PROJECT, "content-type": ""}, {})


@check
def list_get_and_delete_sessions():
    _, email = new_account()
    user_client, first = signed_in(email)
    _, second = signed_in(email)
    account = Account(user_client)
    sessions = account.list_sessions()
    expect_equal(sessions.total, 2, "total")
    expect_equal(sorted(s.id for s in sessions.sessions), sorted([first.id, second.id]), "session IDs")
    expect_equal([s.current for s in sessions.sessions if s.id == first.id], [True], "current flag")
    expect_equal(account.list_sessions(total=False).total, 0, "total=false")
    expect_equal(account.get_session(session_id="current").id, first.id, "get_session(current)")
    expect_equal(account.get_session(session_id=second.id).current, False, "another session is not current")

    expect_equal(account.delete_session(session_id=second.id), b"", "a delete returns the empty body")
    expect_equal([s.id for s in account.list_sessions().sessions], [first.id], "after deleting the other session")
    expect_error("user_session_not_found", 404, account.delete_session, session_id=second.id)
    expect_error("user_session_not_found", 404, account.get_session, session_id="nope")

    expect_equal(account.delete_session(session_id="current"), b"", "deleting the current session")
    expect_error("general_unauthorized_scope", 401, account.get)


@check
def browser_origins_must_be_web_platforms():
    _, email = new_account()
    evil = client()
    evil.add_header("origin", "https://evil.example")
    expect_error("general_unknown_origin", 403, Account(evil).create_email_password_session, email=email, password=PASSWORD)
    good = client()
    good.add_header("origin", "https://shop.example")
    expect_equal(Account(good).create_email_password_session(email=email, password=PASSWORD).current, True, "a web platform origin")
