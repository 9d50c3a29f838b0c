package subjects

import prl "github.com/kverify/kverify/props/ratelimit"

// OursLimiters are our rate limiters as a subject.
func OursLimiters() prl.Subject { return prl.Subject{} }
