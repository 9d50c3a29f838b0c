package libfuzzer

import "testing"

// The libFuzzer harnesses: go-118-fuzz-build rewrites this file, so it
// holds nothing but them (see the package doc).

func machine(f *testing.F, target string) {
	f.Fuzz(func(_ *testing.T, data []byte) { Run(target, data) })
}

// FuzzCheckQueueDrain is the libFuzzer harness of Machines["FuzzCheckQueueDrain"].
func FuzzCheckQueueDrain(f *testing.F) { machine(f, "FuzzCheckQueueDrain") }

// FuzzCheckQueueDoneUnheld is the libFuzzer harness of Machines["FuzzCheckQueueDoneUnheld"].
func FuzzCheckQueueDoneUnheld(f *testing.F) { machine(f, "FuzzCheckQueueDoneUnheld") }

// FuzzCheckQueueMetrics is the libFuzzer harness of Machines["FuzzCheckQueueMetrics"].
func FuzzCheckQueueMetrics(f *testing.F) { machine(f, "FuzzCheckQueueMetrics") }

// FuzzCheckQueueOrder is the libFuzzer harness of Machines["FuzzCheckQueueOrder"].
func FuzzCheckQueueOrder(f *testing.F) { machine(f, "FuzzCheckQueueOrder") }

// FuzzCheckQueueModel is the libFuzzer harness of Machines["FuzzCheckQueueModel"].
func FuzzCheckQueueModel(f *testing.F) { machine(f, "FuzzCheckQueueModel") }

// FuzzCheckDelayingMetrics is the libFuzzer harness of Machines["FuzzCheckDelayingMetrics"].
func FuzzCheckDelayingMetrics(f *testing.F) { machine(f, "FuzzCheckDelayingMetrics") }

// FuzzCheckDelayingModel is the libFuzzer harness of Machines["FuzzCheckDelayingModel"].
func FuzzCheckDelayingModel(f *testing.F) { machine(f, "FuzzCheckDelayingModel") }

// FuzzCheckDelayingTies is the libFuzzer harness of Machines["FuzzCheckDelayingTies"].
func FuzzCheckDelayingTies(f *testing.F) { machine(f, "FuzzCheckDelayingTies") }

// FuzzCheckDelayingDeadline is the libFuzzer harness of Machines["FuzzCheckDelayingDeadline"].
func FuzzCheckDelayingDeadline(f *testing.F) { machine(f, "FuzzCheckDelayingDeadline") }

// FuzzCheckRatelimitExponential is the libFuzzer harness of Machines["FuzzCheckRatelimitExponential"].
func FuzzCheckRatelimitExponential(f *testing.F) { machine(f, "FuzzCheckRatelimitExponential") }

// FuzzCheckRatelimitExponentialOverflow is the libFuzzer harness of Machines["FuzzCheckRatelimitExponentialOverflow"].
func FuzzCheckRatelimitExponentialOverflow(f *testing.F) {
	machine(f, "FuzzCheckRatelimitExponentialOverflow")
}

// FuzzCheckRatelimitFastslow is the libFuzzer harness of Machines["FuzzCheckRatelimitFastslow"].
func FuzzCheckRatelimitFastslow(f *testing.F) { machine(f, "FuzzCheckRatelimitFastslow") }

// FuzzCheckRatelimitMaxof is the libFuzzer harness of Machines["FuzzCheckRatelimitMaxof"].
func FuzzCheckRatelimitMaxof(f *testing.F) { machine(f, "FuzzCheckRatelimitMaxof") }

// FuzzCheckRatelimitMaxwait is the libFuzzer harness of Machines["FuzzCheckRatelimitMaxwait"].
func FuzzCheckRatelimitMaxwait(f *testing.F) { machine(f, "FuzzCheckRatelimitMaxwait") }

// FuzzCheckRatelimitBucket is the libFuzzer harness of Machines["FuzzCheckRatelimitBucket"].
func FuzzCheckRatelimitBucket(f *testing.F) { machine(f, "FuzzCheckRatelimitBucket") }

// FuzzCheckRatelimitingModel is the libFuzzer harness of Machines["FuzzCheckRatelimitingModel"].
func FuzzCheckRatelimitingModel(f *testing.F) { machine(f, "FuzzCheckRatelimitingModel") }

// FuzzCheckRatelimitingDelegates is the libFuzzer harness of Machines["FuzzCheckRatelimitingDelegates"].
func FuzzCheckRatelimitingDelegates(f *testing.F) { machine(f, "FuzzCheckRatelimitingDelegates") }

// FuzzCheckRingFifo is the libFuzzer harness of Machines["FuzzCheckRingFifo"].
func FuzzCheckRingFifo(f *testing.F) { machine(f, "FuzzCheckRingFifo") }

// FuzzCheckRingCapLaw is the libFuzzer harness of Machines["FuzzCheckRingCapLaw"].
func FuzzCheckRingCapLaw(f *testing.F) { machine(f, "FuzzCheckRingCapLaw") }

// FuzzCheckChunkedFifo is the libFuzzer harness of Machines["FuzzCheckChunkedFifo"].
func FuzzCheckChunkedFifo(f *testing.F) { machine(f, "FuzzCheckChunkedFifo") }

// FuzzCheckChunkedCapLaw is the libFuzzer harness of Machines["FuzzCheckChunkedCapLaw"].
func FuzzCheckChunkedCapLaw(f *testing.F) { machine(f, "FuzzCheckChunkedCapLaw") }

// FuzzCheckPooledFifo is the libFuzzer harness of Machines["FuzzCheckPooledFifo"].
func FuzzCheckPooledFifo(f *testing.F) { machine(f, "FuzzCheckPooledFifo") }

// FuzzCheckPooledCapLaw is the libFuzzer harness of Machines["FuzzCheckPooledCapLaw"].
func FuzzCheckPooledCapLaw(f *testing.F) { machine(f, "FuzzCheckPooledCapLaw") }

// FuzzCheckAssembledConverge is the libFuzzer harness of Machines["FuzzCheckAssembledConverge"].
func FuzzCheckAssembledConverge(f *testing.F) { machine(f, "FuzzCheckAssembledConverge") }

// FuzzCheckPumpStep is the libFuzzer harness of Machines["FuzzCheckPumpStep"].
func FuzzCheckPumpStep(f *testing.F) { machine(f, "FuzzCheckPumpStep") }

// FuzzCheckListenerDelivery is the libFuzzer harness of Machines["FuzzCheckListenerDelivery"].
func FuzzCheckListenerDelivery(f *testing.F) { machine(f, "FuzzCheckListenerDelivery") }

// FuzzCheckDeltafifoSynced is the libFuzzer harness of Machines["FuzzCheckDeltafifoSynced"].
func FuzzCheckDeltafifoSynced(f *testing.F) { machine(f, "FuzzCheckDeltafifoSynced") }

// FuzzCheckDeltafifoModel is the libFuzzer harness of Machines["FuzzCheckDeltafifoModel"].
func FuzzCheckDeltafifoModel(f *testing.F) { machine(f, "FuzzCheckDeltafifoModel") }

// FuzzCheckDeltafifoNoKnown is the libFuzzer harness of Machines["FuzzCheckDeltafifoNoKnown"].
func FuzzCheckDeltafifoNoKnown(f *testing.F) { machine(f, "FuzzCheckDeltafifoNoKnown") }

// FuzzCheckDeltafifoDedup is the libFuzzer harness of Machines["FuzzCheckDeltafifoDedup"].
func FuzzCheckDeltafifoDedup(f *testing.F) { machine(f, "FuzzCheckDeltafifoDedup") }

// FuzzCheckDeltafifoFaults is the libFuzzer harness of Machines["FuzzCheckDeltafifoFaults"].
func FuzzCheckDeltafifoFaults(f *testing.F) { machine(f, "FuzzCheckDeltafifoFaults") }

// FuzzCheckDeltafifoPipeline is the libFuzzer harness of Machines["FuzzCheckDeltafifoPipeline"].
func FuzzCheckDeltafifoPipeline(f *testing.F) { machine(f, "FuzzCheckDeltafifoPipeline") }

// FuzzCheckDeltafifoReplace is the libFuzzer harness of Machines["FuzzCheckDeltafifoReplace"].
func FuzzCheckDeltafifoReplace(f *testing.F) { machine(f, "FuzzCheckDeltafifoReplace") }

// FuzzCheckRealfifoModel is the libFuzzer harness of Machines["FuzzCheckRealfifoModel"].
func FuzzCheckRealfifoModel(f *testing.F) { machine(f, "FuzzCheckRealfifoModel") }

// FuzzCheckRealfifoAtomic is the libFuzzer harness of Machines["FuzzCheckRealfifoAtomic"].
func FuzzCheckRealfifoAtomic(f *testing.F) { machine(f, "FuzzCheckRealfifoAtomic") }

// FuzzCheckRealfifoBatch is the libFuzzer harness of Machines["FuzzCheckRealfifoBatch"].
func FuzzCheckRealfifoBatch(f *testing.F) { machine(f, "FuzzCheckRealfifoBatch") }

// FuzzCheckRealfifoSynced is the libFuzzer harness of Machines["FuzzCheckRealfifoSynced"].
func FuzzCheckRealfifoSynced(f *testing.F) { machine(f, "FuzzCheckRealfifoSynced") }

// FuzzCheckRealfifoFaults is the libFuzzer harness of Machines["FuzzCheckRealfifoFaults"].
func FuzzCheckRealfifoFaults(f *testing.F) { machine(f, "FuzzCheckRealfifoFaults") }

// FuzzCheckRealfifoPipeline is the libFuzzer harness of Machines["FuzzCheckRealfifoPipeline"].
func FuzzCheckRealfifoPipeline(f *testing.F) { machine(f, "FuzzCheckRealfifoPipeline") }

// FuzzCheckRealfifoReplace is the libFuzzer harness of Machines["FuzzCheckRealfifoReplace"].
func FuzzCheckRealfifoReplace(f *testing.F) { machine(f, "FuzzCheckRealfifoReplace") }

// FuzzCheckReflectorWithholding is the libFuzzer harness of Machines["FuzzCheckReflectorWithholding"].
func FuzzCheckReflectorWithholding(f *testing.F) { machine(f, "FuzzCheckReflectorWithholding") }

// FuzzCheckReflectorMalformed is the libFuzzer harness of Machines["FuzzCheckReflectorMalformed"].
func FuzzCheckReflectorMalformed(f *testing.F) { machine(f, "FuzzCheckReflectorMalformed") }

// FuzzCheckReflectorMachine is the libFuzzer harness of Machines["FuzzCheckReflectorMachine"].
func FuzzCheckReflectorMachine(f *testing.F) { machine(f, "FuzzCheckReflectorMachine") }

// FuzzCheckBackoffSequence is the libFuzzer harness of Machines["FuzzCheckBackoffSequence"].
func FuzzCheckBackoffSequence(f *testing.F) { machine(f, "FuzzCheckBackoffSequence") }

// FuzzCheckBackoffJitter is the libFuzzer harness of Machines["FuzzCheckBackoffJitter"].
func FuzzCheckBackoffJitter(f *testing.F) { machine(f, "FuzzCheckBackoffJitter") }

// FuzzCheckBackoffReset is the libFuzzer harness of Machines["FuzzCheckBackoffReset"].
func FuzzCheckBackoffReset(f *testing.F) { machine(f, "FuzzCheckBackoffReset") }

// FuzzCheckBackoffResetDeclared is the libFuzzer harness of Machines["FuzzCheckBackoffResetDeclared"].
func FuzzCheckBackoffResetDeclared(f *testing.F) { machine(f, "FuzzCheckBackoffResetDeclared") }

// FuzzCheckDeltafifoErrorPaths is the libFuzzer harness of Machines["FuzzCheckDeltafifoErrorPaths"].
func FuzzCheckDeltafifoErrorPaths(f *testing.F) { machine(f, "FuzzCheckDeltafifoErrorPaths") }

// FuzzCheckDeltafifoCollaborators is the libFuzzer harness of Machines["FuzzCheckDeltafifoCollaborators"].
func FuzzCheckDeltafifoCollaborators(f *testing.F) { machine(f, "FuzzCheckDeltafifoCollaborators") }

// FuzzCheckRealfifoErrorPaths is the libFuzzer harness of Machines["FuzzCheckRealfifoErrorPaths"].
func FuzzCheckRealfifoErrorPaths(f *testing.F) { machine(f, "FuzzCheckRealfifoErrorPaths") }

// FuzzCheckRealfifoCollaborators is the libFuzzer harness of Machines["FuzzCheckRealfifoCollaborators"].
func FuzzCheckRealfifoCollaborators(f *testing.F) { machine(f, "FuzzCheckRealfifoCollaborators") }

// FuzzCheckListwatchReflectorWithholding is the libFuzzer harness of Machines["FuzzCheckListwatchReflectorWithholding"].
func FuzzCheckListwatchReflectorWithholding(f *testing.F) {
	machine(f, "FuzzCheckListwatchReflectorWithholding")
}

// FuzzCheckListwatchReflectorMalformed is the libFuzzer harness of Machines["FuzzCheckListwatchReflectorMalformed"].
func FuzzCheckListwatchReflectorMalformed(f *testing.F) {
	machine(f, "FuzzCheckListwatchReflectorMalformed")
}

// FuzzCheckListwatchReflectorMachine is the libFuzzer harness of Machines["FuzzCheckListwatchReflectorMachine"].
func FuzzCheckListwatchReflectorMachine(f *testing.F) {
	machine(f, "FuzzCheckListwatchReflectorMachine")
}

// FuzzCheckWireSchedules is the libFuzzer harness of Machines["FuzzCheckWireSchedules"].
func FuzzCheckWireSchedules(f *testing.F) { machine(f, "FuzzCheckWireSchedules") }

// FuzzCheckControllerConverge is the libFuzzer harness of Machines["FuzzCheckControllerConverge"].
func FuzzCheckControllerConverge(f *testing.F) { machine(f, "FuzzCheckControllerConverge") }

// FuzzCheckRetrywatcherModel is the libFuzzer harness of Machines["FuzzCheckRetrywatcherModel"].
func FuzzCheckRetrywatcherModel(f *testing.F) { machine(f, "FuzzCheckRetrywatcherModel") }
