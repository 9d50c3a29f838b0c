// Package modelserver is the model API server the checks of client-side
// machinery run against: spec/apiserver's model of LIST and WATCH over one
// resource, served through client-go's ListerWatcher method set (Server)
// inside a synctest bubble, under a fault schedule fixed in advance (Fault:
// refusals, 410/429/500/504, stale reads, initial events out of version
// order, streams cut early or held, missing end bookmarks, slow streams,
// malformed events), drawn by FaultGen or decoded from bytes by
// DecodeFaults.
//
// The server also judges what a client asks of it: every request's shape
// by client-go's rules (Server.Expect, Server.Violations), and whether it
// relists or re-watches as spec/reflector's model allows after the request
// before it (Server.ExpectRelist, Server.RelistViolations). It records
// every call, every event each watch delivered (Server.Delivered) and the
// kinds of answers it gave (Server.Answers), for the checks to read.
//
// The reflector's checks (props/reflector), the controller's
// (props/controller), the wire's (props/wire, which serves it over HTTP)
// and kverify serve use it; so can a test of anything that lists and
// watches.
package modelserver
