"""An MCP server that requires OAuth, built from the official SDK's own server auth
(``mcp.server.auth``: an ``OAuthAuthorizationServerProvider`` as in the SDK's simple-auth
example), that approves every authorization at once (no login page): the authorization
endpoint redirects straight to the client's callback with a code.

    python mcp_oauth_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp
    python mcp_oauth_server.py --sse PORT      # HTTP+SSE on 127.0.0.1:PORT/sse

Its tool ``whoami`` answers with the counts the tests check: authorizations granted and
refresh grants served. Access tokens are revoked when refreshed, so an old one fails.
"""

from __future__ import annotations

import argparse
import secrets
import time
import warnings

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

warnings.simplefilter("ignore")


class AutoApprove:
    """Authorization server and token store in memory; every authorization is approved."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.authorizations = 0
        self.refreshes = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        self.authorizations += 1
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300,
            client_id=str(client.client_id), code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(str(client.client_id), authorization_code.scopes,
                           authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken, scopes: list[str]
                                     ) -> OAuthToken:
        self.refreshes += 1
        self.refresh.pop(refresh_token.token, None)
        for key in [k for k, v in self.access.items() if v.client_id == client.client_id]:
            del self.access[key]  # the old access token stops working
        return self._issue(str(client.client_id), scopes or refresh_token.scopes,
                           refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_hex(16)}", f"rt-{secrets.token_hex(16)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + 3600, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id,
                                             scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=3600,
                          refresh_token=refresh, scope=" ".join(scopes))


def build(port: int, path: str) -> MCPServer:
    provider = AutoApprove()
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "oauth-demo", log_level="WARNING", auth_server_provider=provider,
        auth=AuthSettings(issuer_url=base, resource_server_url=f"{base}{path}",
                          validate_token_resource=False, required_scopes=["mcp"],
                          client_registration_options=ClientRegistrationOptions(
                              enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"])))

    @server.tool()
    def whoami() -> str:
        """Who is calling, and how often this server authorized and refreshed."""
        return (f"authorized; authorizations={provider.authorizations}; "
                f"refreshes={provider.refreshes}")

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--sse", type=int)
    args = parser.parse_args()
    if args.sse:
        build(args.sse, "/sse").run("sse", host="127.0.0.1", port=args.sse)
    else:
        build(args.http, "/mcp").run("streamable-http", host="127.0.0.1", port=args.http)
