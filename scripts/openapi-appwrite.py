#!/usr/bin/env python3
"""Adds or refreshes the Appwrite face's routes in Sources/SesameServer/openapi.json (run after adding a route)."""
import json, pathlib

path = pathlib.Path(__file__).resolve().parent.parent / "Sources/SesameServer/openapi.json"
doc = json.loads(path.read_text())
err = {"$ref": "#/components/responses/AppwriteError"}
doc["components"]["responses"]["AppwriteError"] = {
    "description": "An Appwrite error: {message, code, type, version}",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AppwriteError"}}},
}
doc["components"]["schemas"]["AppwriteError"] = {
    "type": "object", "required": ["message", "code", "type", "version"],
    "properties": {"message": {"type": "string"}, "code": {"type": "integer"}, "type": {"type": "string"},
                   "version": {"type": "string"}},
}
doc["components"]["securitySchemes"].update({
    "appwriteProject": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Project"},
    "appwriteKey": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Key",
                    "description": "A project API key, sesame_sk_... (users.write covers Appwrite's sessions.write)"},
    "appwriteSession": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Session",
                        "description": "A session secret; also the cookie a_session_<projectId> or X-Fallback-Cookies"},
})

def op(summary, success, security, errors, body=None, params=()):
    o = {"summary": summary, "tags": ["appwrite"],
         "responses": {str(success): {"description": "Success"} if success == 204 else
                       {"description": "Success", "content": {"application/json": {"schema": {"type": "object"}}}}},
         "security": security}
    for code in sorted(set(errors) | {404, 405, 413, 415, 500}):
        o["responses"][str(code)] = err
    if body:
        o["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "properties": {name: {"type": kind} for name, kind in body.items()}}}}}
    if params:
        o["parameters"] = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params]
    return o

guest = [{"appwriteProject": []}, {"appwriteProject": [], "appwriteKey": []}]
user = [{"appwriteProject": [], "appwriteSession": []}]
key = [{"appwriteProject": [], "appwriteKey": []}]
routes = {
    "/v1/account": {
        "post": op("Creates an account with email and password (Appwrite account.create)", 201, guest, [400, 401, 409, 501],
                   {"userId": "string", "email": "string", "password": "string", "name": "string"}),
        "get": op("The current user (Appwrite account.get)", 200, user, [401]),
    },
    "/v1/account/sessions/email": {
        "post": op("Signs in with email and password (Appwrite account.createEmailPasswordSession)", 201, guest,
                   [400, 401, 403, 501], {"email": "string", "password": "string", "duration": "number"}),
    },
    "/v1/account/sessions": {
        "get": op("The current user's sessions (Appwrite account.listSessions)", 200, user, [401]),
        "delete": op("Ends every session; current=false keeps the caller's (Appwrite account.deleteSessions)", 204, user, [401],
                     {"current": "boolean"}),
    },
    "/v1/account/sessions/{sessionId}": {
        "get": op("One session of the current user; `current` is the caller's (Appwrite account.getSession)", 200, user,
                  [401], params=["sessionId"]),
        "delete": op("Ends a session; `current` is the caller's (Appwrite account.deleteSession)", 204, user, [401],
                     params=["sessionId"]),
        "patch": op("Extends a session to a full lifetime from now (Appwrite account.updateSession)", 200, user, [401],
                    params=["sessionId"]),
    },
    "/v1/account/sessions/token": {
        "post": op("Exchanges a sign-in token (a passkey TokenSecret) for a session (Appwrite account.createSession)", 201,
                   guest, [400, 401, 403, 429], {"userId": "string", "secret": "string"}),
    },
    "/v1/account/passkeys": {
        "get": op("The current user's verified passkeys (Appwrite account.listPasskeys)", 200, user, [401]),
        "post": op("Starts a passkey registration in this session (Appwrite account.createPasskey)", 201, user,
                   [400, 401, 409, 429, 501], {"passkeyId": "string", "name": "string"}),
    },
    "/v1/account/passkeys/{passkeyId}": {
        "get": op("One verified passkey (Appwrite account.getPasskey)", 200, user, [401], params=["passkeyId"]),
        "patch": op("Renames a passkey (Appwrite account.updatePasskey)", 200, user, [400, 401], {"name": "string"},
                    params=["passkeyId"]),
        "delete": op("Deletes a passkey; needs a recent sign-in (Appwrite account.deletePasskey)", 204, user, [401],
                     params=["passkeyId"]),
    },
    "/v1/account/passkeys/{passkeyId}/verification": {
        "put": op("Finishes a registration with the RegistrationResponseJSON (Appwrite account.updatePasskeyVerification)",
                  200, user, [400, 401, 409, 501], {"credential": "object"}, params=["passkeyId"]),
    },
    "/v1/account/tokens/passkey": {
        "post": op("Starts a usernameless passkey sign-in (Appwrite account.createPasskeyToken)", 201, guest, [401, 429, 501]),
        "put": op("Finishes it with the AuthenticationResponseJSON; answers a TokenSecret (Appwrite account.updatePasskeyToken)",
                  201, guest, [400, 401, 403, 429, 501], {"challengeId": "string", "credential": "object"}),
    },
    "/v1/users": {
        "get": op("The project's users (Appwrite users.list; scope users.read)", 200, key, [401]),
        "post": op("Creates a user; email and password optional (Appwrite users.create; scope users.write)", 201, key,
                   [400, 401, 409], {"userId": "string", "email": "string", "password": "string", "name": "string"}),
    },
    "/v1/users/{userId}": {
        "get": op("One user (Appwrite users.get)", 200, key, [401], params=["userId"]),
        "delete": op("Deletes a user with passkeys, pending registrations, sessions and tokens (Appwrite users.delete)", 204,
                     key, [401], params=["userId"]),
    },
    "/v1/users/{userId}/status": {
        "patch": op("Blocks (false) or unblocks a user (Appwrite users.updateStatus)", 200, key, [400, 401], {"status": "boolean"},
                    params=["userId"]),
    },
    "/v1/users/{userId}/tokens": {
        "post": op("Mints a sign-in token, 4 to 128 of a-z0-9 (Appwrite users.createToken)", 201, key, [400, 401],
                   {"length": "number", "expire": "number"}, params=["userId"]),
    },
    "/v1/users/{userId}/mfa": {
        "patch": op("Turns MFA on or off for the user (Appwrite users.updateMfa)", 200, key, [400, 401], {"mfa": "boolean"},
                    params=["userId"]),
    },
    "/v1/users/{userId}/verification": {
        "patch": op("Marks the email verified or not (Appwrite users.updateEmailVerification)", 200, key, [400, 401],
                    {"emailVerification": "boolean"}, params=["userId"]),
    },
    "/v1/users/{userId}/sessions": {
        "get": op("The user's sessions (Appwrite users.listSessions)", 200, key, [401], params=["userId"]),
        "post": op("Mints a session, its secret in the body (Appwrite users.createSession)", 201, key, [401, 403],
                   params=["userId"]),
        "delete": op("Ends every session of the user (Appwrite users.deleteSessions)", 204, key, [401], params=["userId"]),
    },
    "/v1/account/jwts": {
        "post": op("A JWT (HS256) for the calling session (Appwrite account.createJWT)", 201, user, [400, 401],
                   {"duration": "number"}),
    },
    "/v1/users/{userId}/jwts": {
        "post": op("A JWT for one of the user's sessions, recent() by default (Appwrite users.createJWT)", 201, key,
                   [400, 401], {"sessionId": "string", "duration": "number"}, params=["userId"]),
    },
    "/v1/users/{userId}/sessions/{sessionId}": {
        "delete": op("Ends one of the user's sessions (Appwrite users.deleteSession)", 204, key, [401],
                     params=["userId", "sessionId"]),
    },
    "/v1/users/{userId}/passkeys": {
        "get": op("The user's verified passkeys (Appwrite users.listPasskeys)", 200, key, [401], params=["userId"]),
    },
    "/v1/users/{userId}/passkeys/{passkeyId}": {
        "get": op("One of the user's passkeys (Appwrite users.getPasskey)", 200, key, [401], params=["userId", "passkeyId"]),
        "patch": op("Renames one (Appwrite users.updatePasskey)", 200, key, [400, 401], {"name": "string"},
                    params=["userId", "passkeyId"]),
        "delete": op("Deletes one, no recency rule (Appwrite users.deletePasskey)", 204, key, [401],
                     params=["userId", "passkeyId"]),
    },
    "/v1/project": {"get": op("The project (Appwrite project.get; scope project.read)", 200, key, [401])},
    "/v1/project/auth-methods/{methodId}": {
        "patch": op("Switches an authentication method on or off (Appwrite project.updateAuthMethod)", 200, key, [400, 401],
                    {"enabled": "boolean"}, params=["methodId"]),
    },
    "/v1/project/policies": {"get": op("The policies: the passkey policy (Appwrite project.listPolicies)", 200, key, [401])},
    "/v1/project/policies/passkey": {
        "get": op("The passkey policy: relying party ID and origins (Appwrite project.getPolicy)", 200, key, [401]),
        "patch": op("Sets the relying party ID, permanent once passkeys exist; answers the Project (Appwrite "
                    "project.updatePasskeyPolicy)", 200, key, [400, 401], {"rpId": "string"}),
    },
    "/v1/project/platforms": {"get": op("The platforms (Appwrite project.listPlatforms)", 200, key, [401])},
    "/v1/project/platforms/{platformId}": {
        "get": op("One platform (Appwrite project.getPlatform)", 200, key, [401], params=["platformId"]),
        "delete": op("Removes a platform (Appwrite project.deletePlatform)", 204, key, [401], params=["platformId"]),
    },
    "/v1/project/platforms/web/{platformId}": {
        "put": op("Updates a web platform (Appwrite project.updateWebPlatform)", 200, key, [400, 401],
                  {"name": "string", "hostname": "string"}, params=["platformId"]),
    },
    "/v1/project/platforms/android/{platformId}": {
        "put": op("Updates an Android platform; omitted fingerprints are kept (Appwrite project.updateAndroidPlatform)", 200,
                  key, [400, 401], {"name": "string", "applicationId": "string", "fingerprints": "array"}, params=["platformId"]),
    },
    "/v1/project/platforms/apple/{platformId}": {
        "put": op("Updates an Apple platform (Appwrite project.updateApplePlatform)", 200, key, [400, 401],
                  {"name": "string", "bundleIdentifier": "string"}, params=["platformId"]),
    },
    "/v1/project/platforms/web": {
        "post": op("Adds a web platform (Appwrite project.createWebPlatform)", 201, key, [400, 401, 409],
                   {"platformId": "string", "name": "string", "hostname": "string"}),
    },
    "/v1/project/platforms/android": {
        "post": op("Adds an Android platform (Appwrite project.createAndroidPlatform)", 201, key, [400, 401, 409],
                   {"platformId": "string", "name": "string", "applicationId": "string", "fingerprints": "array"}),
    },
    "/v1/project/platforms/apple": {
        "post": op("Adds an Apple platform (Appwrite project.createApplePlatform)", 201, key, [400, 401, 409],
                   {"platformId": "string", "name": "string", "bundleIdentifier": "string"}),
    },
}
for key in [k for k in doc["paths"] if k.startswith("/v1/")]:
    del doc["paths"][key]
doc["paths"].update(routes)
path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
