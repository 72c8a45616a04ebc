// Replaced by the real driver (in progress).
int main() { return 1; }
