// The reference for `launch::ecma`: whether GNU libstdc++ compiles each line of stdin as
// llama.cpp compiles a `-hf REPO:TAG` tag, `std::regex(TAG + "[.-]", std::regex::icase)`
// (common/download.cpp at 0c1e570, find_best_model). Prints `ok` or `error:N` (the
// regex_constants::error_type value) and the line, tab-separated: verdicts.tsv is this
// program's output (g++ 12.2, libstdc++ 12) for hand-written tags and 2,500 random patterns
// over regex punctuation, escapes, classes and repetitions. Regenerate with
//   g++ -O1 -o /tmp/ecma-oracle tests/launch/ecma/oracle.cpp
//   cut -f2- tests/launch/ecma/verdicts.tsv | /tmp/ecma-oracle > /tmp/verdicts.tsv
// and compare; `cargo test -p dflash-check-core launch::ecma` checks the Rust port against it.
#include <iostream>
#include <regex>
#include <string>

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        try {
            std::regex pattern(line + "[.-]", std::regex::icase);
            std::cout << "ok\t" << line << "\n";
        } catch (const std::regex_error & e) {
            std::cout << "error:" << e.code() << "\t" << line << "\n";
        }
    }
}
