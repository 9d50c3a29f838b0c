package upstream

import prl "github.com/kverify/kverify/props/ratelimit"

// Limiters returns client-go's rate limiters as a subject.
func Limiters() prl.Subject { return prl.Subject{} }
