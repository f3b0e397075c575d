// A client acpdrive did not write: the TypeScript SDK's Streamable HTTP
// client (createHttpStream, 2.x) drives one whole turn against a server.
//
//   node sdk-http-client.mjs SDK_DIR URL CWD
//
// SDK_DIR is the installed @agentclientprotocol/sdk package folder. The
// client initializes, opens a session in CWD, sends one prompt, answers
// every permission request with its allow_once option, closes the session
// when the agent offers session/close, then closes the transport.
//
// Standard output is one JSON object a line, in the order things happened:
//   {"event":"initialized","protocolVersion":N,"close":BOOL}
//   {"event":"session","sessionId":S}
//   {"event":"update","update":{...}}         each session/update
//   {"event":"permission","toolCallId":ID,"answer":OPTION_ID}
//   {"event":"stop","stopReason":R}
//   {"event":"session_closed"}
//   {"event":"done"}
// or, when anything fails, {"event":"error","message":M,"data":D} and exit 1.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, url, cwd] = process.argv.slice(2);
if (!sdkDir || !url || !cwd) {
	console.error("usage: node sdk-http-client.mjs SDK_DIR URL CWD");
	process.exit(2);
}
const load = (rel) => import(pathToFileURL(join(sdkDir, rel)).href);
const acp = await load("dist/v1/stable/acp.js");
const { createHttpStream } = await load("dist/transports/http-stream.js");

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const app = acp
	.client({ name: "sdk-http-client" })
	.onNotification(acp.methods.client.session.update, ({ params }) => {
		emit({ event: "update", update: params.update });
	})
	.onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
		const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
		emit({ event: "permission", toolCallId: params.toolCall.toolCallId, answer: allow.optionId });
		return { outcome: { outcome: "selected", optionId: allow.optionId } };
	});

try {
	await app.connectWith(createHttpStream(url), async (ctx) => {
		const init = await ctx.request(acp.methods.agent.initialize, {
			protocolVersion: acp.PROTOCOL_VERSION,
			clientCapabilities: {},
		});
		const canClose = Boolean(init.agentCapabilities?.sessionCapabilities?.close);
		emit({ event: "initialized", protocolVersion: init.protocolVersion, close: canClose });
		const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
		emit({ event: "session", sessionId });
		const res = await ctx.request(acp.methods.agent.session.prompt, {
			sessionId,
			prompt: [{ type: "text", text: "hello from the TypeScript SDK" }],
		});
		emit({ event: "stop", stopReason: res.stopReason });
		if (canClose) {
			await ctx.request(acp.methods.agent.session.close, { sessionId });
			emit({ event: "session_closed" });
		}
	});
	emit({ event: "done" });
} catch (err) {
	emit({ event: "error", message: String(err?.message ?? err), data: err?.data ?? null });
	process.exit(1);
}
