package mutants

var delayingMutants = []Mutant{}
