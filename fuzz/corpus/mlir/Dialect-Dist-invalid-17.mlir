
// expected-error @+1 {{'dist.mesh' op has more than 2^31 ranks (2 before axis 'b' of size 4294967296)}}
dist.mesh @mesh axes = [a = 2, b = 4294967296, c = 4294967296]
