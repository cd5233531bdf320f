/// \file fit_outputs.cpp
/// The run directory of `t3k fit` (fit_outputs.hpp).

#include "drivers/fit_outputs.hpp"

#include "drivers/errors.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/core/build_info.hpp"
#include "t3k/version.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <utility>

namespace t3k {
namespace fit {

namespace {

namespace fs = std::filesystem;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Writes `text` to `path` atomically; a failure is a failure of the run (exit 1).
void write_text_atomically(std::string const& path, std::string const& text) {
  try {
    io::write_text_file(path, text);
  } catch (io::FileError const& e) {
    throw FitRuntimeError(e.what());
  }
}

std::string xml_escape(std::string const& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

long max_rss_bytes() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return long(usage.ru_maxrss) * 1024;  // KiB on Linux
}

/// A history cell: full precision, and empty for a NaN (a figure the optimizer did not compute, such as the
/// gradient norm at iteration 0 of mc_sgd and adam or the minibatch loss of full-batch optimizers).
std::string csv_number(double v) { return std::isnan(v) ? std::string() : fmt::format("{:.17g}", v); }

std::string history_csv(std::vector<IterationRecord> const& h) {
  std::string out =
      "iteration,loss,relative_residual,gradient_norm,step,elapsed_seconds,chunk_size,minibatch_loss,"
      "validation_relative_residual,rank_stage\n";
  for (auto const& r : h) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{}\n", r.iteration, csv_number(r.loss),
                   csv_number(r.relative_residual), csv_number(r.gradient_norm), csv_number(r.step),
                   csv_number(r.elapsed_seconds), r.chunk_size, csv_number(r.minibatch_loss),
                   csv_number(r.validation_relative_residual), r.rank_stage);
  }
  return out;
}

template <class Integer>
void emit_list(YAML::Emitter& out, std::vector<Integer> const& v) {
  out << YAML::Flow << YAML::BeginSeq;
  for (auto e : v) out << e;
  out << YAML::EndSeq;
}

void emit_figures(YAML::Emitter& out, IterationRecord const& r, bool final_figures) {
  out << YAML::BeginMap;
  out << YAML::Key << "loss" << YAML::Value << r.loss;
  out << YAML::Key << "relative_residual" << YAML::Value << r.relative_residual;
  if (std::isfinite(r.validation_relative_residual)) {
    out << YAML::Key << "validation_relative_residual" << YAML::Value << r.validation_relative_residual;
  }
  if (final_figures) {
    out << YAML::Key << "gradient_norm" << YAML::Value << r.gradient_norm;
    out << YAML::Key << "iterations" << YAML::Value << r.iteration;
  }
  out << YAML::EndMap;
}

std::string summary_yaml(Config const& config, Setup const& setup, Result const& result, Timings const& t,
                         std::size_t resumed_from, std::int64_t peak_bytes, bool checkpointed) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "t3k_version" << YAML::Value << T3K_VERSION_STRING;
  out << YAML::Key << "kokkos_version" << YAML::Value << t3k::kokkos_version_string();
  out << YAML::Key << "backend" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "execution_space" << YAML::Value << Space::name();
  out << YAML::Key << "memory_space" << YAML::Value << Mem::name();
  out << YAML::Key << "concurrency" << YAML::Value << Space().concurrency();
  out << YAML::Key << "mpi_ranks" << YAML::Value << setup.problem.comm.size();
  out << YAML::EndMap;
  out << YAML::Key << "config_file" << YAML::Value << fs::absolute(config.file).lexically_normal().string();
  out << YAML::Key << "config" << YAML::Value << YAML::Load(config.to_yaml());
  out << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "source" << YAML::Value << (config.source == ProblemSource::synthetic ? "synthetic" : "data");
  out << YAML::Key << "kind" << YAML::Value << to_string(setup.problem.kind);
  out << YAML::Key << "description" << YAML::Value << setup.description;
  out << YAML::Key << "mode_shapes" << YAML::Value;
  emit_list(out, setup.mode_shapes);
  out << YAML::Key << "n_probes" << YAML::Value << setup.problem.n_global_probes();
  out << YAML::Key << "order" << YAML::Value << setup.problem.order;
  // What ran: the configured omega_k, or ones.
  out << YAML::Key << "order_weights" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (std::size_t k = 0; k <= setup.problem.order; ++k) {
    out << (config.order_weights.empty() ? 1.0 : config.order_weights[k]);
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "tucker_ranks" << YAML::Value;
  emit_list(out, result.x.tucker_ranks());
  out << YAML::Key << "tt_ranks" << YAML::Value;
  emit_list(out, result.x.tt_ranks());
  // The model's degrees of freedom, to set against the number of measurements (docs/math.md).
  bool const shared = setup.sharing.n_modes() > 0 && !setup.sharing.is_trivial();
  if (shared) {
    out << YAML::Key << "sharing" << YAML::Value;
    emit_list(out, setup.sharing.labels());
  }
  out << YAML::Key << "manifold_dimension" << YAML::Value
      << (shared ? t3k::manifold_dimension(result.x, setup.sharing) : t3k::manifold_dimension(result.x));
  if (setup.continuation.enabled()) {
    out << YAML::Key << "rank_steps" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (std::size_t k = 1; k < result.history.size(); ++k) {
      if (result.history[k].rank_stage != result.history[k - 1].rank_stage) out << result.history[k].iteration;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  if (setup.problem.validation) {
    out << YAML::Key << "validation" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "n_probes" << YAML::Value << setup.problem.validation->n_global_probes();
    out << YAML::Key << "relative_residual" << YAML::Value << result.validation_relative_residual;
    out << YAML::EndMap;
  }
  out << YAML::Key << "initial" << YAML::Value;
  emit_figures(out, result.history.front(), false);
  out << YAML::Key << "final" << YAML::Value;
  emit_figures(out, result.history.back(), true);
  out << YAML::Key << "converged" << YAML::Value << result.converged;
  out << YAML::Key << "reason" << YAML::Value << result.reason;
  out << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
  for (auto const& n : result.notes) out << n;
  out << YAML::EndSeq;
  if (resumed_from > 0) out << YAML::Key << "resumed_from_iteration" << YAML::Value << resumed_from;
  out << YAML::Key << "chunk_size" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "requested" << YAML::Value << config.chunk_size.to_string();
  out << YAML::Key << "used" << YAML::Value << result.chunk_size;
  out << YAML::EndMap;
  out << YAML::Key << "timings_seconds" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "setup" << YAML::Value << t.setup;
  out << YAML::Key << "fit" << YAML::Value << t.fit;
  out << YAML::Key << "output" << YAML::Value << t.output;
  out << YAML::Key << "total" << YAML::Value << t.total;
  out << YAML::EndMap;
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "peak_kokkos_bytes" << YAML::Value << peak_bytes;
  out << YAML::Key << "peak_kokkos_bytes_source" << YAML::Value
      << std::string("t3k::AllocationTracker (Kokkos allocations in ") + Mem::name() + ")";
  out << YAML::Key << "max_rss_bytes" << YAML::Value << max_rss_bytes();
  out << YAML::EndMap;
  out << YAML::Key << "outputs" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << RunFiles::model;
  out << YAML::Key << "history" << YAML::Value << RunFiles::history;
  out << YAML::Key << "plot" << YAML::Value << RunFiles::plot;
  if (checkpointed) out << YAML::Key << "checkpoint" << YAML::Value << RunFiles::checkpoint;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

std::vector<IterationRecord> merged_history(std::vector<IterationRecord> const& before,
                                            std::vector<IterationRecord> const& now) {
  if (!now.empty() && now.front().iteration == 0) return now;
  std::vector<IterationRecord> out;
  std::size_t const first_new = now.empty() ? std::size_t(-1) : now.front().iteration;
  for (auto const& r : before) {
    if (r.iteration < first_new) out.push_back(r);
  }
  out.insert(out.end(), now.begin(), now.end());
  return out;
}

std::map<std::size_t, std::string> rank_step_labels(std::vector<std::string> const& notes) {
  std::map<std::size_t, std::string> out;
  for (auto const& note : notes) {
    for (std::string const prefix : {"rank step at iteration ", "unused ranks dropped at iteration "}) {
      if (note.rfind(prefix, 0) != 0) continue;
      std::vector<std::string> lists;  // the bracketed rank lists, in order
      for (std::size_t open = note.find('['); open != std::string::npos; open = note.find('[', open + 1)) {
        std::size_t const close = note.find(']', open);
        if (close == std::string::npos) break;
        // "[2 x 3 x 2]" as "2-3-2": short enough to run down a panel.
        std::string list;
        for (char ch : note.substr(open + 1, close - open - 1)) {
          if (ch != ' ') list += ch == 'x' ? '-' : ch;
        }
        lists.push_back(list);
      }
      // A step lists old and new ranks of each kind, a drop only the new ones.
      bool const step = lists.size() == 4;
      if (!step && lists.size() != 2) continue;
      std::size_t const iteration = std::size_t(std::strtoull(note.c_str() + prefix.size(), nullptr, 10));
      out[iteration] = "Tucker " + lists[step ? 1 : 0] + ", TT " + lists[step ? 3 : 1];
    }
  }
  return out;
}

std::string convergence_svg(std::string const& title, std::string const& x_label, std::vector<PlotPanel> const& panels,
                            std::vector<PlotMark> const& marks) {
  double const width = 760, left = 90, right = 30, gap = 70;
  double const plot_w = width - left - right;
  double const plot_h = 210;
  double x_max = 1;
  for (auto const& p : panels)
    for (auto const& s : p.curves)
      for (double x : s.x) x_max = std::max(x_max, x);
  // Margins inside the frame: 3% of the x range on each side, a tenth of the log range above and below.
  double const x_pad = 0.03 * x_max;
  auto px = [&](double x) { return left + plot_w * (x + x_pad) / (x_max + 2 * x_pad); };
  // Rank-step labels run in rows of their own above the first panel, outside the data: each starts at its mark (or
  // ends there, near the right edge), in the first row where it overlaps no other (about 6 pixels a character at 10
  // points).
  double const row_h = 13;
  std::vector<std::size_t> label_row(marks.size(), 0);
  std::vector<bool> label_ends(marks.size(), false);
  std::vector<std::vector<std::pair<double, double>>> rows;  // the spans taken in each row
  for (std::size_t k = 0; k < marks.size(); ++k) {
    double const x = px(marks[k].x), w = 6 * double(marks[k].label.size());
    label_ends[k] = x + 3 + w > width - 4;
    double const from = label_ends[k] ? x - 3 - w : x + 3, to = from + w;
    std::size_t row = 0;
    auto clear = [&](std::pair<double, double> const& span) { return to + 8 < span.first || span.second + 8 < from; };
    while (row < rows.size() && !std::all_of(rows[row].begin(), rows[row].end(), clear)) ++row;
    if (row == rows.size()) rows.emplace_back();
    rows[row].push_back({from, to});
    label_row[k] = row;
  }
  double const top = 50 + row_h * double(rows.size());  // the title, then the rows of labels
  double const height = top + double(panels.size()) * (plot_h + gap) + 10;
  std::string svg;
  auto out = std::back_inserter(svg);
  // Coordinates as {:g}: six significant digits, plenty for a 760-pixel drawing.
  fmt::format_to(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" height=\"{:g}\" viewBox=\"0 0 {:g} {:g}\" "
                 "font-family=\"sans-serif\" font-size=\"12\">\n",
                 width, height, width, height);
  fmt::format_to(out, "<rect x=\"0\" y=\"0\" width=\"{:g}\" height=\"{:g}\" fill=\"white\"/>\n", width, height);
  fmt::format_to(out, "<text x=\"{:g}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n", width / 2,
                 xml_escape(title));
  // x ticks: about 8 at a 1-2-5 step.
  double step = 1;
  for (double decade = 1; x_max / step > 8; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      step = m * decade;
      if (x_max / step <= 8) break;
    }
  }
  char const* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  for (std::size_t p = 0; p < panels.size(); ++p) {
    auto const& panel = panels[p];
    double const y0 = top + double(p) * (plot_h + gap);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    auto widen = [&](double v) {
      if (std::isfinite(v) && v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    };
    for (auto const& s : panel.curves)
      for (double v : s.y) widen(v);
    widen(panel.reference);
    double l_lo = 0, l_hi = 1;
    if (hi > 0) {
      l_lo = std::log10(lo);
      l_hi = std::log10(hi);
      if (l_hi - l_lo < 1) {
        double const mid = 0.5 * (l_lo + l_hi);
        l_lo = mid - 0.5;
        l_hi = mid + 0.5;
      }
      double const pad = 0.1 * (l_hi - l_lo);
      l_lo -= pad;
      l_hi += pad;
    }
    auto py = [&](double v) { return y0 + plot_h * (1 - (std::log10(v) - l_lo) / (l_hi - l_lo)); };
    // Frame, grid and ticks.
    fmt::format_to(out, "<rect x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"none\" stroke=\"black\"/>\n",
                   left, y0, plot_w, plot_h);
    int const d_lo = int(std::ceil(l_lo)), d_hi = int(std::floor(l_hi));
    int const decade_step = std::max(1, (d_hi - d_lo + 8) / 8);
    for (int e = d_lo; e <= d_hi; e += decade_step) {
      double const y = py(std::pow(10.0, e));
      fmt::format_to(out, "<line x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"#dddddd\"/>\n", left, y,
                     left + plot_w, y);
      fmt::format_to(out, "<line x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"black\"/>\n", left - 5, y,
                     left, y);
      fmt::format_to(out, "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"end\">1e{}</text>\n", left - 8, y + 4, e);
    }
    for (double x = 0; x <= x_max + 1e-9; x += step) {
      double const xx = px(x);
      fmt::format_to(out, "<line x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"black\"/>\n", xx, y0 + plot_h,
                     xx, y0 + plot_h + 5);
      fmt::format_to(out, "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">{:g}</text>\n", xx, y0 + plot_h + 18, x);
    }
    fmt::format_to(out, "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">{}</text>\n", left + plot_w / 2,
                   y0 + plot_h + 36, x_label);
    fmt::format_to(out,
                   "<text x=\"20\" y=\"{:g}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {:g})\">{} (log "
                   "scale)</text>\n",
                   y0 + plot_h / 2, y0 + plot_h / 2, panel.label);
    // Rank steps: dashed vertical marks.
    for (auto const& m : marks) {
      fmt::format_to(out,
                     "<line class=\"rank-step\" x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"#888888\" "
                     "stroke-dasharray=\"4 3\"/>\n",
                     px(m.x), y0, px(m.x), y0 + plot_h);
    }
    // The tolerance (or other reference value) as a horizontal line.
    if (std::isfinite(panel.reference) && panel.reference > 0) {
      double const y = py(panel.reference);
      fmt::format_to(out,
                     "<line class=\"reference\" x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"#555555\" "
                     "stroke-dasharray=\"8 4\"/>\n",
                     left, y, left + plot_w, y);
      fmt::format_to(out,
                     "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"end\" fill=\"#555555\" font-size=\"10\">{}</text>\n",
                     left + plot_w - 4, y - 4, panel.reference_label);
    }
    // The curves, broken at values a log scale cannot show; a legend when there are several.
    for (std::size_t c = 0; c < panel.curves.size(); ++c) {
      auto const& s = panel.curves[c];
      std::string const color = colors[c % 4];
      std::string points;
      auto flush = [&]() {
        if (!points.empty()) {
          fmt::format_to(out, "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color,
                         points);
        }
        points.clear();
      };
      for (std::size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
        double const v = s.y[k];
        if (!(std::isfinite(v) && v > 0)) {
          flush();
          continue;
        }
        fmt::format_to(std::back_inserter(points), "{:g},{:g} ", px(s.x[k]), py(v));
        if (s.x.size() <= 60) {
          fmt::format_to(out, "<circle cx=\"{:g}\" cy=\"{:g}\" r=\"2.5\" fill=\"{}\"/>\n", px(s.x[k]), py(v), color);
        }
      }
      flush();
    }
    // The legend sits under the frame, left of the axis label: outside the data and the rank-step labels above.
    if (panel.curves.size() > 1) {
      double lx = left;
      double const ly = y0 + plot_h + 36;
      for (std::size_t c = 0; c < panel.curves.size(); ++c) {
        fmt::format_to(out,
                       "<line class=\"legend\" x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"{}\" "
                       "stroke-width=\"2\"/>\n",
                       lx, ly - 4, lx + 18, ly - 4, colors[c % 4]);
        fmt::format_to(out, "<text x=\"{:g}\" y=\"{:g}\" font-size=\"11\">{}</text>\n", lx + 22, ly,
                       xml_escape(panel.curves[c].label));
        lx += 22 + 7 * double(panel.curves[c].label.size()) + 16;  // about 7 pixels a character at 11 points
      }
    }
    // Rank-step labels, each with a dotted lead down to its mark; the labels come after all leads, with a white
    // halo, so that a lead to a higher row passes behind a lower label instead of through it.
    if (p == 0) {
      for (std::size_t k = 0; k < marks.size(); ++k) {
        double const x = px(marks[k].x), y = y0 - 8 - row_h * double(label_row[k]);
        fmt::format_to(out,
                       "<line x1=\"{:g}\" y1=\"{:g}\" x2=\"{:g}\" y2=\"{:g}\" stroke=\"#888888\" "
                       "stroke-dasharray=\"1 2\"/>\n",
                       x, y + 2, x, y0);
      }
      for (std::size_t k = 0; k < marks.size(); ++k) {
        double const x = px(marks[k].x), y = y0 - 8 - row_h * double(label_row[k]);
        fmt::format_to(out,
                       "<text class=\"rank-step-label\" x=\"{:g}\" y=\"{:g}\" text-anchor=\"{}\" fill=\"#555555\" "
                       "font-size=\"10\" stroke=\"white\" stroke-width=\"4\" paint-order=\"stroke\">{}</text>\n",
                       label_ends[k] ? x - 3 : x + 3, y, label_ends[k] ? "end" : "start", xml_escape(marks[k].label));
      }
    }
  }
  fmt::format_to(out, "</svg>\n");
  return svg;
}

void write_run_directory(std::string const& directory, Config const& config, Setup const& setup, Result const& result,
                         RunFacts facts) {
  auto const t_out = Clock::now();
  Space space;
  {
    io::Writer w((fs::path(directory) / RunFiles::model).string());
    w.write_t3(copy_t3_to<Kokkos::HostSpace>(space, result.x));
    if (setup.sharing.n_modes() > 0 && !setup.sharing.is_trivial()) {
      auto const& labels = setup.sharing.labels();
      w.write_integer_list_attribute("/t3", "sharing", std::vector<std::int64_t>(labels.begin(), labels.end()));
    }
    io::RootAttributes a;
    a.d = std::int64_t(result.x.n_modes());
    a.w = std::int64_t(setup.problem.n_global_probes());
    a.k = std::int64_t(setup.problem.order);
    w.write_root_attributes(a);
    w.commit();
  }
  write_text_atomically((fs::path(directory) / RunFiles::history).string(), history_csv(result.history));
  PlotSeries residual{"training", {}, {}}, validation{"validation", {}, {}}, loss{"loss", {}, {}},
      grad{"gradient norm", {}, {}};
  std::vector<PlotMark> marks;
  auto const step_labels = rank_step_labels(result.notes);
  for (std::size_t k = 0; k < result.history.size(); ++k) {
    auto const& r = result.history[k];
    double const x = double(r.iteration);
    residual.x.push_back(x);
    residual.y.push_back(r.relative_residual);
    validation.x.push_back(x);
    validation.y.push_back(r.validation_relative_residual);
    loss.x.push_back(x);
    loss.y.push_back(r.loss);
    grad.x.push_back(x);
    grad.y.push_back(r.gradient_norm);
    if (k > 0 && r.rank_stage != result.history[k - 1].rank_stage) {
      auto const label = step_labels.find(r.iteration);
      marks.push_back({x, label != step_labels.end() ? label->second : "rank step"});
    }
  }
  PlotPanel first{
      "relative residual", {residual}, config.optimizer.common().tol_relative_residual, "tol_relative_residual"};
  if (setup.problem.validation) first.curves.push_back(validation);
  std::string const title = "t3k fit " + fs::path(config.file).filename().string() + " -> " +
                            fs::path(directory).filename().string() + " (" + config.optimizer.name() + ")";
  write_text_atomically(
      (fs::path(directory) / RunFiles::plot).string(),
      convergence_svg(title, "iteration",
                      {first, PlotPanel{"loss", {loss}, 0, ""}, PlotPanel{"gradient norm", {grad}, 0, ""}}, marks));
  facts.timings.output = seconds_since(t_out);
  facts.timings.total = seconds_since(facts.start);
  write_text_atomically(
      (fs::path(directory) / RunFiles::summary).string(),
      summary_yaml(config, setup, result, facts.timings, facts.resumed_from, facts.peak_bytes, facts.checkpointed));
}

}  // namespace fit
}  // namespace t3k
