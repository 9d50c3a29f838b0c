package traces

import _ "embed" // the schemas, for validators outside this directory

// ClientSchema is traces/client.schema.json: one line of the
// kverify-client/v1 protocol. props/wire validates every line a process
// client writes against it.
//
//go:embed client.schema.json
var ClientSchema []byte
