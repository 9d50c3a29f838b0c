package mutants

var ratelimitMutants = []Mutant{}
