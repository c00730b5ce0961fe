
// expected-error @+1 {{'dist.mesh' op names axis 'tp' twice}}
dist.mesh @mesh axes = [tp = 4, tp = 2]
