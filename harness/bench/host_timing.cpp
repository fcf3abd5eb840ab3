#include "harness/bench/host_timing.h"

namespace fb::bench {

void host_timer::start() { m_start = std::chrono::steady_clock::now(); }

void host_timer::stop() { m_stop = std::chrono::steady_clock::now(); }

double host_timer::get_elapsed() const { return std::chrono::duration<double>(m_stop - m_start).count(); }

}  // namespace fb::bench
