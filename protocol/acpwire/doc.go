// Package acpwire holds the Agent Client Protocol v1 wire types acpdrive
// speaks as a client, pinned to the stable schema release v1.21.0.
//
// Outbound requests are plain structs. Inbound session/update payloads are
// decoded in two stages: DecodeUpdate first reads the sessionUpdate
// discriminator, then decodes only the eleven stable variants into their own
// structs; anything else is kept raw in Update.Raw so nothing is misclassified.
package acpwire

// ProtocolVersion is the only ACP protocol version this client speaks.
const ProtocolVersion = 1

// SchemaVersion is the stable ACP schema release these types are pinned to.
const SchemaVersion = "v1.21.0"
