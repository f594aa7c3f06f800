// c4_mcts: a Connect Four Monte Carlo tree search engine speaking UGI on stdin/stdout.
//
//   g++ -O2 -std=c++17 -o c4_mcts c4_mcts.cpp
//   arena-bot --name my-c4 --game connect4 --strategy "ugi:./c4_mcts"
//
// Moves are columns 0-6 (the arena's move numbers). The engine answers
// ugi/isready/uginewgame/position/go/stop/setoption/quit as in docs/engines.md:
// it searches (UCT, random playouts) until `go movetime MS` runs out, writes one
// `info` line (depth, score cp, nodes, nps, pv) and `bestmove COLUMN`.
// Options: `setoption name Exploration value 1.4`, `setoption name Seed value 7`.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kWidth = 7;
constexpr int kHeight = 6;
constexpr int kCells = kWidth * kHeight;

// Bitboard: column c occupies bits c*7 .. c*7+5; bit c*7+6 is a sentinel row.
struct Board {
    uint64_t mine = 0;   // stones of the player to move
    uint64_t mask = 0;   // all stones
    int plies = 0;

    static uint64_t bottom(int col) { return uint64_t{1} << (col * (kHeight + 1)); }
    static uint64_t top(int col) { return uint64_t{1} << (kHeight - 1 + col * (kHeight + 1)); }

    bool can_play(int col) const { return (mask & top(col)) == 0; }

    // Play `col` for the player to move; the other player is to move after.
    void play(int col) {
        mine ^= mask;  // now the opponent's stones
        mask |= mask + bottom(col);
        ++plies;
    }

    // Whether the stones `pos` contain four in a row.
    static bool four(uint64_t pos) {
        const int shifts[4] = {1, kHeight, kHeight + 1, kHeight + 2};
        for (int s : shifts) {
            uint64_t m = pos & (pos >> s);
            if (m & (m >> (2 * s))) return true;
        }
        return false;
    }

    // Whether the player who just moved has won (their stones are mine ^ mask).
    bool last_mover_won() const { return four(mine ^ mask); }
    bool full() const { return plies == kCells; }

    int legal(int out[kWidth]) const {
        int n = 0;
        for (int c = 0; c < kWidth; ++c)
            if (can_play(c)) out[n++] = c;
        return n;
    }
};

constexpr size_t kMaxNodes = 4'000'000;  // about 130 MB: well inside the arena's 2 GiB limit

struct Node {
    int move = -1;
    int parent = -1;
    int first_child = -1;  // children are stored together; -1 until expanded
    int children = 0;
    double visits = 0;
    double score = 0;  // for the player who made `move`: 1 win, 0.5 draw, 0 loss
    bool terminal = false;
};

class Search {
public:
    double exploration = 1.4;
    std::mt19937_64 rng{1};

    int run(const Board& root_board, double seconds, std::ostream& out) {
        auto start = std::chrono::steady_clock::now();
        nodes_.clear();
        nodes_.push_back(make_node(-1, -1, false));
        long iterations = 0;
        int max_depth = 0;
        while (true) {
            if ((iterations & 63) == 0) {
                double spent = elapsed(start);
                if (spent >= seconds && iterations > 0) break;
            }
            Board board = root_board;
            int depth = 0;
            int node = select_and_expand(board, depth);
            max_depth = std::max(max_depth, depth);
            double result = nodes_[node].terminal ? terminal_score(board) : playout(board);
            backup(node, result);
            ++iterations;
        }
        double spent = std::max(elapsed(start), 1e-6);
        int best = best_child(0);
        const Node& b = nodes_[best];
        double value = 2.0 * (b.score / std::max(1.0, b.visits)) - 1.0;  // for the mover
        value = std::clamp(value, -0.999, 0.999);
        int cp = static_cast<int>(std::lround(400.0 * std::log10((1 + value) / (1 - value))));
        out << "info depth " << max_depth << " score cp " << cp << " nodes " << iterations
            << " nps " << static_cast<long>(iterations / spent) << " pv";
        for (int n = best; n != -1; n = nodes_[n].children ? best_child(n) : -1)
            out << ' ' << nodes_[n].move;
        out << '\n';
        return b.move;
    }

private:
    std::vector<Node> nodes_;

    static double elapsed(std::chrono::steady_clock::time_point start) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    static Node make_node(int move, int parent, bool terminal) {
        Node node;
        node.move = move;
        node.parent = parent;
        node.terminal = terminal;
        return node;
    }

    int best_child(int node) const {
        const Node& n = nodes_[node];
        int best = n.first_child;
        for (int i = 0; i < n.children; ++i) {
            int c = n.first_child + i;
            if (nodes_[c].visits > nodes_[best].visits) best = c;
        }
        return best;
    }

    // Children are stored contiguously, so a node expands all its moves at once. When
    // the tree is full, leaves are no longer expanded: their playouts go on.
    int select_and_expand(Board& board, int& depth) {
        int node = 0;
        while (!nodes_[node].terminal) {
            if (nodes_[node].first_child == -1) {
                if (nodes_.size() + kWidth > kMaxNodes) return node;
                int first = static_cast<int>(nodes_.size());
                int moves[kWidth];
                int count = board.legal(moves);
                for (int i = 0; i < count; ++i) {
                    Board next = board;
                    next.play(moves[i]);
                    bool end = next.last_mover_won() || next.full();
                    nodes_.push_back(make_node(moves[i], node, end));
                }
                nodes_[node].first_child = first;
                nodes_[node].children = count;
                int pick = first + static_cast<int>(rng() % count);
                board.play(nodes_[pick].move);
                ++depth;
                return pick;
            }
            node = uct_child(node);
            board.play(nodes_[node].move);
            ++depth;
        }
        return node;
    }

    int uct_child(int node) const {
        const Node& n = nodes_[node];
        double log_n = std::log(std::max(1.0, n.visits));
        int best = n.first_child;
        double best_value = -1e300;
        for (int i = 0; i < n.children; ++i) {
            const Node& c = nodes_[n.first_child + i];
            double value = c.visits == 0
                ? 1e9
                : c.score / c.visits + exploration * std::sqrt(log_n / c.visits);
            if (value > best_value) {
                best_value = value;
                best = n.first_child + i;
            }
        }
        return best;
    }

    // The result for the player who moved last into `board`.
    static double terminal_score(const Board& board) { return board.last_mover_won() ? 1.0 : 0.5; }

    double playout(Board board) {
        int start_plies = board.plies;
        int moves[kWidth];
        while (!board.last_mover_won() && !board.full()) {
            int n = board.legal(moves);
            board.play(moves[rng() % n]);
        }
        if (!board.last_mover_won()) return 0.5;
        // The winner moved last; score it for the player who moved into the start node.
        return ((board.plies - start_plies) % 2 == 0) ? 1.0 : 0.0;
    }

    void backup(int node, double result) {
        while (node != -1) {
            nodes_[node].visits += 1;
            nodes_[node].score += result;
            result = 1.0 - result;
            node = nodes_[node].parent;
        }
    }
};

std::string option_value(std::istringstream& words, std::string& name) {
    std::string word, value;
    words >> word;  // "name"
    while (words >> word && word != "value") name += (name.empty() ? "" : " ") + word;
    std::getline(words, value);
    value.erase(0, value.find_first_not_of(' '));
    return value;
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    Search search;
    Board board;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream words(line);
        std::string command;
        if (!(words >> command)) continue;
        if (command == "ugi") {
            std::cout << "id name c4_mcts\nid author MCTS Arena example\n"
                      << "option name Exploration type string default 1.4\n"
                      << "option name Seed type spin default 1 min 0 max 2147483647\n"
                      << "ugiok" << std::endl;
        } else if (command == "isready") {
            std::cout << "readyok" << std::endl;
        } else if (command == "setoption") {
            std::string name;
            std::string value = option_value(words, name);
            if (name == "Exploration") search.exploration = std::stod(value);
            if (name == "Seed") search.rng.seed(std::stoull(value));
        } else if (command == "uginewgame") {
            board = Board();
        } else if (command == "position") {
            std::string word;
            board = Board();
            words >> word;  // startpos
            if (words >> word && word == "moves") {
                int col;
                while (words >> col) board.play(col);
            }
        } else if (command == "go") {
            double movetime_ms = 1000;
            std::string key;
            long value;
            while (words >> key >> value)
                if (key == "movetime") movetime_ms = static_cast<double>(value);
            int move = search.run(board, movetime_ms / 1000.0, std::cout);
            std::cout << "bestmove " << move << std::endl;
        } else if (command == "quit") {
            break;
        }
        // "stop" arrives only after a search has ended here: nothing to do.
    }
    return 0;
}
