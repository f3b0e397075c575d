/*
 * smallagent: the smallest ACP agent the scale benchmarks need, so that
 * thousands of sessions fit on one machine (a Go agent costs megabytes of
 * RSS per process). It reads newline-delimited JSON-RPC from stdin and
 * answers:
 *   initialize      protocol version 1, no capabilities
 *   session/new     a session ID unique to this process
 *   session/prompt  one agent_message_chunk "ok", then end_turn
 *   other requests  -32601 method not found
 * Notifications are ignored. It exits 0 on end of file of stdin.
 *
 * It is no JSON parser: it finds the first "id": and "method": of a line,
 * which is enough for the client's own messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char sid[32];

/* copy_id copies the raw JSON value after "id": into out (NUL-terminated);
 * returns 0 when the line has no id (a notification). */
static int copy_id(const char *line, char *out, size_t n) {
	const char *p = strstr(line, "\"id\":");
	if (p == NULL)
		return 0;
	p += 5;
	while (*p == ' ')
		p++;
	size_t i = 0;
	if (*p == '"') {
		out[i++] = *p++;
		while (*p && *p != '"' && i < n - 2) {
			if (*p == '\\' && p[1] && i < n - 3)
				out[i++] = *p++;
			out[i++] = *p++;
		}
		out[i++] = '"';
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ' ' && i < n - 1)
			out[i++] = *p++;
	}
	out[i] = 0;
	return i > 0 && strcmp(out, "null") != 0;
}

/* is_method reports whether the line's method is m. */
static int is_method(const char *line, const char *m) {
	const char *p = strstr(line, "\"method\":");
	if (p == NULL)
		return 0;
	p += 9;
	while (*p == ' ')
		p++;
	size_t n = strlen(m);
	return *p == '"' && strncmp(p + 1, m, n) == 0 && p[1 + n] == '"';
}

int main(void) {
	char *line = NULL;
	size_t cap = 0;
	char id[128];
	snprintf(sid, sizeof sid, "small-%ld", (long)getpid());
	setvbuf(stdout, NULL, _IOFBF, 4096);
	while (getline(&line, &cap, stdin) >= 0) {
		if (!copy_id(line, id, sizeof id))
			continue; /* a notification, or a response */
		if (is_method(line, "initialize")) {
			printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":1,"
			       "\"agentCapabilities\":{\"loadSession\":false},\"authMethods\":[]}}\n", id);
		} else if (is_method(line, "session/new")) {
			printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"sessionId\":\"%s\"}}\n", id, sid);
		} else if (is_method(line, "session/prompt")) {
			printf("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"%s\","
			       "\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
			       "\"content\":{\"type\":\"text\",\"text\":\"ok\"}}}}\n", sid);
			printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"stopReason\":\"end_turn\"}}\n", id);
		} else if (strstr(line, "\"method\":") != NULL) {
			printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n", id);
		} else {
			continue; /* a response to a request of ours: we send none */
		}
		fflush(stdout);
	}
	free(line);
	return 0;
}
