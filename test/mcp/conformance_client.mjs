// The TypeScript SDK's client, as a client of the official MCP conformance
// suite: the suite plays a server (and its authorization server) and runs
//
//   node conformance_client.mjs URL
//
// with the scenario's name in MCP_CONFORMANCE_SCENARIO. The client connects
// to URL over streamable HTTP with an OAuth provider that needs no person:
// when the SDK sends it to the authorization endpoint, it requests that URL
// itself and takes the code from the redirect, as a browser would hand it
// to a redirect_uri. It then lists the server's tools and exits 0, or
// exits 1 saying why. cli/conformance_e2e_test.go runs it directly and
// through `toolcap mcp --listen --forward-auth --url` (test/conformance/
// vialisten), for the scenarios of the 2025-03-26 authorization spec, whose
// discovery the go-sdk's client does not play.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const url = process.argv.at(-1);
if (!url || !/^https?:\/\//.test(url)) {
  console.error("usage: node conformance_client.mjs URL");
  process.exit(2);
}

const redirectUrl = "http://127.0.0.1:1/callback"; // never served: the code is read from the redirect

// headlessProvider keeps what the SDK's OAuth flow stores in memory, and
// authorizes by following the authorization endpoint's redirect itself.
class HeadlessProvider {
  #client;
  #tokens;
  #verifier;
  code;
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "toolcap-conformance-ts",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
  }
  saveCodeVerifier(v) {
    this.#verifier = v;
  }
  codeVerifier() {
    return this.#verifier;
  }
  async redirectToAuthorization(authorizationUrl) {
    const resp = await fetch(authorizationUrl, { redirect: "manual" });
    const location = resp.headers.get("location");
    if (!location) {
      throw new Error(`the authorization endpoint answered ${resp.status} with no redirect`);
    }
    const code = new URL(location, authorizationUrl).searchParams.get("code");
    if (!code) {
      throw new Error(`the authorization endpoint redirected to ${location}, with no code`);
    }
    this.code = code;
  }
}

const provider = new HeadlessProvider();

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "toolcap-conformance-ts", version: "1.0.0" });
  try {
    await client.connect(transport);
    return client;
  } catch (err) {
    if (!(err instanceof UnauthorizedError) || !provider.code) {
      throw err;
    }
    await transport.finishAuth(provider.code);
    provider.code = undefined;
    const again = new Client({ name: "toolcap-conformance-ts", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    return again;
  }
}

try {
  const client = await connect();
  await client.listTools();
  await client.close();
  process.exit(0);
} catch (err) {
  console.error(`conformance_client: ${process.env.MCP_CONFORMANCE_SCENARIO ?? "no scenario"}: ${err?.stack ?? err}`);
  process.exit(1);
}
