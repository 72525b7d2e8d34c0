//! `nrt top`: neuron-top for the simulated instance, a live terminal view
//! (ratatui over crossterm) of core utilisation, vCPU use, memory by
//! category and the models and processes using the devices, refreshed
//! from the devices' datastores every interval.

use crate::observe::{DeviceColumns, HostColumns, Instance, Sample, human_bytes, utilization};
use anyhow::Result;
use nrt_hal::status::MemCategory;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::time::{Duration, Instant};

/// What one screen shows, computed from two samples.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// Title line.
    pub title: String,
    /// Core version label (`v3d`).
    pub core_version: String,
    /// Per device, per logical core: utilisation %.
    pub utilization: Vec<Vec<f64>>,
    /// System vCPU (user %, system %).
    pub system_cpu: (f64, f64),
    /// Runtime processes' vCPU (user %, system %).
    pub runtime_cpu: (f64, f64),
    /// Host memory of the selected processes.
    pub host: HostColumns,
    /// Device memory of the selected processes.
    pub device: DeviceColumns,
    /// Tree rows, always fully expanded (device, its logical cores per
    /// process, their models), the depth shown by indentation: (depth,
    /// label, model id, device bytes, host bytes).
    pub details: Vec<(usize, String, String, u64, u64)>,
    /// Tabs: "all", then each process (tag or pid).
    pub tabs: Vec<String>,
    /// Selected tab.
    pub tab: usize,
}

fn cpu_totals() -> Option<[u64; 4]> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let l = text.lines().next()?;
    let v: Vec<u64> = l.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user + nice, system + irq + softirq, all.
    Some([v.first()? + v.get(1)?, v.get(2)? + v.get(5).unwrap_or(&0) + v.get(6).unwrap_or(&0), v.iter().sum(), 0])
}

fn proc_ticks(pid: u32) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

/// The host CPU counters one refresh reads.
#[derive(Clone, Debug, Default)]
pub struct CpuSample {
    system: Option<[u64; 4]>,
    procs: Vec<(u32, (u64, u64))>,
}

impl CpuSample {
    /// Reads `/proc` for the system and the sample's processes.
    pub fn read(s: &Sample) -> CpuSample {
        CpuSample { system: cpu_totals(), procs: s.processes().filter_map(|(_, p)| proc_ticks(p.pid).map(|t| (p.pid, t))).collect() }
    }
}

/// Builds the view of `now` against `prev` for tab `tab` (0 = all).
pub fn view(inst: &Instance, prev: &Sample, now: &Sample, pc: &CpuSample, nc: &CpuSample, tab: usize) -> View {
    let secs = now.at.duration_since(prev.at).as_secs_f64().max(1e-3);
    let mut pids: Vec<(u32, String)> = now.processes().map(|(_, p)| (p.pid, if p.tag.is_empty() { p.pid.to_string() } else { p.tag.clone() })).collect();
    pids.sort();
    pids.dedup();
    let tab = tab.min(pids.len());
    let selected = |pid: u32| tab == 0 || pids.get(tab - 1).is_some_and(|(p, _)| *p == pid);
    let npd = inst.nc_per_device() as usize;
    let mut util = vec![vec![0.0; npd]; inst.devices as usize];
    let mut host = [0u64; MemCategory::COUNT];
    let mut dev = [0u64; MemCategory::COUNT];
    let mut details = Vec::new();
    for d in 0..inst.devices {
        let mut nd_rows = Vec::new();
        let mut nd_total = (0u64, 0u64);
        for (_, p) in now.processes().filter(|(dd, p)| *dd == d && selected(p.pid)) {
            let lnc = if p.lnc == 0 { inst.lnc } else { p.lnc } as usize;
            let before = prev.find(d, p.pid, p.start_time);
            for c in 0..p.cores.len() {
                if let Some(u) = util[d as usize].get_mut(c / lnc) {
                    *u += utilization(before, p, c, secs) / lnc as f64;
                }
            }
            for (i, v) in p.host_memory.iter().enumerate() {
                host[i] += v;
            }
            for cc in &p.cores {
                for (i, v) in cc.memory.iter().enumerate() {
                    dev[i] += v;
                }
            }
            for l in 0..npd {
                let cores = l * lnc..(l + 1) * lnc;
                let bytes: u64 = p.cores.get(cores.clone()).map_or(0, |cs| cs.iter().map(|c| c.memory_total()).sum());
                let models: Vec<_> = p.models.iter().filter(|m| cores.contains(&(m.core as usize))).collect();
                if bytes == 0 && models.is_empty() {
                    continue;
                }
                nd_total.0 += bytes;
                nd_rows.push((1, format!("NC {l}  (pid {})", p.pid), String::new(), bytes, 0));
                for m in models {
                    let total: u64 = m.memory.iter().sum();
                    nd_rows.push((2, m.name.clone(), m.id.to_string(), total, m.host_bytes));
                }
            }
        }
        details.push((0, format!("ND {d}"), String::new(), nd_total.0, nd_total.1));
        details.extend(nd_rows);
    }
    let pct = |a: u64, b: u64, t: u64| if t == 0 { 0.0 } else { a.saturating_sub(b) as f64 * 100.0 / t as f64 };
    let system_cpu = match (pc.system, nc.system) {
        (Some(b), Some(a)) => {
            let t = a[2].saturating_sub(b[2]);
            (pct(a[0], b[0], t), pct(a[1], b[1], t))
        }
        _ => (0.0, 0.0),
    };
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let mut ru = (0.0, 0.0);
    for (pid, a) in &nc.procs {
        if !selected(*pid) {
            continue;
        }
        if let Some((_, b)) = pc.procs.iter().find(|(p, _)| p == pid) {
            ru.0 += a.0.saturating_sub(b.0) as f64 / 100.0 / secs * 100.0 / ncpu;
            ru.1 += a.1.saturating_sub(b.1) as f64 / 100.0 / secs * 100.0 / ncpu;
        }
    }
    let mut tabs = vec!["all".to_string()];
    tabs.extend(pids.into_iter().map(|(_, l)| l));
    View {
        title: format!("nrt top {} running on {} ({})", env!("CARGO_PKG_VERSION"), inst.instance_id, inst.instance_type),
        core_version: inst.hardware_names().2.to_string(),
        utilization: util,
        system_cpu,
        runtime_cpu: ru,
        host: HostColumns::of(&host),
        device: DeviceColumns::of(&dev),
        details,
        tabs,
        tab,
    }
}

fn bar(pct: f64, width: usize) -> String {
    let filled = ((pct / 100.0) * width as f64).round().clamp(0.0, width as f64) as usize;
    format!("{}{}", "|".repeat(filled), " ".repeat(width - filled))
}

/// Draws `v` on a frame.
pub fn draw(f: &mut Frame, v: &View) {
    let ncores = v.utilization.first().map_or(0, Vec::len);
    // Each core's cell is a bar and `[nnn.nn%] ` (10 columns); as many
    // cells as fit whole go on a line after the 6-column device label,
    // the rest on the lines below, so no bracket is ever clipped.
    const CELL_MIN: usize = 10;
    let inner = (f.area().width as usize).saturating_sub(2 + 6);
    let per_line = (inner / CELL_MIN).clamp(1, ncores.max(1));
    let chunks = ncores.div_ceil(per_line).max(1);
    let util_rows = (chunks * (v.utilization.len() + 1)) as u16 + 2;
    let [title, util, cpu, mem, details, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(util_rows),
        Constraint::Length(4),
        Constraint::Length(9),
        Constraint::Min(3),
        Constraint::Length(2),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(v.title.clone()).style(Style::default().add_modifier(Modifier::REVERSED)), title);
    let all: Vec<f64> = v.utilization.iter().flatten().copied().collect();
    let avg = if all.is_empty() { 0.0 } else { all.iter().sum::<f64>() / all.len() as f64 };
    let col = (inner / per_line).max(CELL_MIN);
    let mut lines = Vec::new();
    for chunk in 0..chunks {
        let range = chunk * per_line..((chunk + 1) * per_line).min(ncores);
        lines.push(Line::from(format!("      {}", range.clone().map(|c| format!("{:<col$}", format!("NC{c}"))).collect::<String>())));
        for (d, cores) in v.utilization.iter().enumerate() {
            let mut spans = vec![Span::raw(format!("ND{d:<3} "))];
            for u in &cores[range.clone()] {
                spans.push(Span::styled(bar(*u, col - CELL_MIN), Style::default().fg(Color::Green)));
                spans.push(Span::raw(format!("[{u:>6.2}%] ")));
            }
            lines.push(Line::from(spans));
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(format!("NeuronCore {} Utilization (Avg: {avg:.2}%)", v.core_version))),
        util,
    );
    // The label (20 columns) and ` [uuu.uu%, sss.ss%]` (19) around the
    // bar, inside the borders (2).
    let w = (cpu.width as usize).saturating_sub(2 + 20 + 19).max(1);
    let cpu_lines = vec![
        Line::from(format!("System vCPU Usage   {} [{:>6.2}%, {:>6.2}%]", bar(v.system_cpu.0 + v.system_cpu.1, w), v.system_cpu.0, v.system_cpu.1)),
        Line::from(format!("Runtime vCPU Usage  {} [{:>6.2}%, {:>6.2}%]", bar(v.runtime_cpu.0 + v.runtime_cpu.1, w), v.runtime_cpu.0, v.runtime_cpu.1)),
    ];
    f.render_widget(Paragraph::new(cpu_lines).block(Block::default().borders(Borders::ALL).title("vCPU Utilization")), cpu);
    let [hm, dm] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(mem);
    let kv = |k: &str, b: u64| Line::from(format!("{k:<18}{:>10}", human_bytes(b)));
    let h = &v.host;
    f.render_widget(
        Paragraph::new(vec![
            kv("Total", h.total()),
            kv("Tensors", h.tensors),
            kv("Constants", h.constants),
            kv("DMA Buffers", h.dma_buffers),
            kv("App. Memory", h.application_memory),
        ])
        .block(Block::default().borders(Borders::ALL).title("Memory Usage Summary: Host Used Memory")),
        hm,
    );
    let d = &v.device;
    f.render_widget(
        Paragraph::new(vec![
            kv("Total", d.total()),
            kv("Tensors", d.tensors),
            kv("Constants", d.constants),
            kv("Model Code", d.model_code),
            kv("Runtime Memory", d.runtime_memory),
            kv("Model Scratchpad", d.scratchpad),
        ])
        .block(Block::default().borders(Borders::ALL).title("Device Used Memory")),
        dm,
    );
    let mut rows = vec![Line::from(Span::styled(
        format!("{:<44}{:>10}{:>16}{:>14}", "", "Model ID", "Device Memory", "Host Memory"),
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    for (depth, label, id, dbytes, hbytes) in &v.details {
        rows.push(Line::from(format!("{:<44}{:>10}{:>16}{:>14}", format!("{}{label}", "  ".repeat(*depth)), id, human_bytes(*dbytes), human_bytes(*hbytes))));
    }
    f.render_widget(Paragraph::new(rows).block(Block::default().borders(Borders::ALL).title("Memory Usage Details")), details);
    let tabs: Vec<Span> = std::iter::once(Span::raw("Neuron Apps  "))
        .chain(v.tabs.iter().enumerate().map(|(i, t)| {
            if i == v.tab { Span::styled(format!(">[{}]:{t}<  ", i + 1), Style::default().add_modifier(Modifier::REVERSED)) } else { Span::raw(format!("[{}]:{t}  ", i + 1)) }
        }))
        .collect();
    f.render_widget(
        Paragraph::new(vec![Line::from(tabs), Line::from("q: quit  a/d: previous/next tab  1-9: select tab")]),
        bottom,
    );
}

/// Runs `nrt top` until `q` (or Ctrl-C), refreshing every `interval`.
pub fn run(interval: Duration) -> Result<()> {
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    let inst = Instance::from_env()?;
    let mut terminal = ratatui::init();
    let result = (|| -> Result<()> {
        let mut prev = Sample::read(&inst);
        let mut prev_cpu = CpuSample::read(&prev);
        let mut now = prev.clone();
        let mut now_cpu = prev_cpu.clone();
        let mut tab = 0usize;
        let mut next = Instant::now();
        loop {
            if Instant::now() >= next {
                prev = std::mem::replace(&mut now, Sample::read(&inst));
                prev_cpu = std::mem::replace(&mut now_cpu, CpuSample::read(&now));
                next = Instant::now() + interval;
            }
            let v = view(&inst, &prev, &now, &prev_cpu, &now_cpu, tab);
            terminal.draw(|f| draw(f, &v))?;
            let wait = next.saturating_duration_since(Instant::now()).min(Duration::from_millis(250));
            if event::poll(wait)?
                && let Event::Key(k) = event::read()?
                && k.kind == KeyEventKind::Press
            {
                match k.code {
                    KeyCode::Char('q') => return Ok(()),
                    KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => return Ok(()),
                    KeyCode::Char('a') | KeyCode::Left => tab = tab.saturating_sub(1),
                    KeyCode::Char('d') | KeyCode::Right => tab = (tab + 1).min(v.tabs.len() - 1),
                    KeyCode::Char(c @ '1'..='9') => tab = (c as usize - '1' as usize).min(v.tabs.len() - 1),
                    _ => {}
                }
            }
        }
    })();
    ratatui::restore();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    #[test]
    fn the_screen_has_neuron_tops_sections() {
        let v = View {
            title: "nrt top 0.1.0 running on i-1 (trn2-1)".into(),
            core_version: "v3d".into(),
            utilization: vec![vec![42.5, 0.0, 0.0, 0.0]],
            details: vec![(0, "ND 0".into(), String::new(), 2048, 0), (2, "copy".into(), "1".into(), 1024, 0)],
            tabs: vec!["all".into(), "123".into()],
            ..View::default()
        };
        let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
        t.draw(|f| draw(f, &v)).unwrap();
        let screen: String = t.backend().buffer().content().iter().map(|c| c.symbol()).collect();
        for s in ["NeuronCore v3d Utilization (Avg: 10.62%)", "ND0", "NC3", "[ 42.50%]", "Host Used Memory", "Model Scratchpad", "    copy", ">[1]:all<", "[2]:123"] {
            assert!(screen.contains(s), "{s} missing");
        }
        assert!(!screen.contains("[+]") && !screen.contains("[-]"), "no expand markers on rows that cannot expand");
    }

    /// Every utilisation cell keeps its closing bracket, whatever the
    /// number of cores against the terminal width (8 logical cores at
    /// LNC 1 in 80 columns wrap onto a second line of cells).
    #[test]
    fn utilisation_brackets_are_never_clipped() {
        for (width, cores) in [(80u16, 8usize), (80, 4), (60, 8), (120, 8), (64, 16)] {
            let v = View { utilization: vec![vec![100.0; cores]; 2], ..View::default() };
            let mut t = Terminal::new(TestBackend::new(width, 50)).unwrap();
            t.draw(|f| draw(f, &v)).unwrap();
            let buf = t.backend().buffer();
            let rows: Vec<String> = (0..buf.area.height).map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()).collect();
            let cells: usize = rows.iter().map(|r| r.matches("[100.00%]").count()).sum();
            assert_eq!(cells, 2 * cores, "{width} columns, {cores} cores:\n{}", rows.join("\n"));
            for r in rows.iter().filter(|r| r.contains("ND") || r.contains("vCPU Usage")) {
                assert_eq!(r.matches('[').count(), r.matches("%]").count(), "a clipped cell in {r:?}");
            }
        }
    }
}
