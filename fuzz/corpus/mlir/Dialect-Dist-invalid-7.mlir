
// expected-error @+1 {{'dist.mesh' op axis 'tp' has size 0; sizes must be >= 1}}
dist.mesh @mesh axes = [tp = 0]
