package io.icebergcdc.bench;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Draws the suite's changes per second as one PNG of two panels: grouped bars of each writer on
 * each workload, and ours against Paimon at each scaling size. Drawn headless.
 */
final class SuiteChart {

  private static final int WIDTH = 1400;
  private static final int HEIGHT = 700;

  private SuiteChart() {}

  static void write(List<BenchSuite.Result> results, Path png) throws IOException {
    DefaultCategoryDataset workloads = new DefaultCategoryDataset();
    DefaultCategoryDataset scaling = new DefaultCategoryDataset();
    List<BenchSuite.Result> bySize = new ArrayList<>(results);
    // Stable: the workloads keep their order, the scaling sizes come smallest first.
    bySize.sort(Comparator.comparingLong(r -> r.run().input().changes()));
    for (BenchSuite.Result result : results) {
      BenchSuite.Run run = result.run();
      if (result.figures() == null || run.writer() == Writer.PLAIN) {
        continue;
      }
      double rate = run.input().changes() / result.get("seconds") / 1000;
      String series =
          run.writer().label()
              + (run.stateBackend().equals("hashmap") ? "" : ", " + run.stateBackend());
      if (!run.group().equals("scaling")) {
        workloads.addValue(rate, series, run.input().workload().id());
      }
    }
    for (BenchSuite.Result result : bySize) {
      BenchSuite.Run run = result.run();
      if (result.figures() == null) {
        continue;
      }
      double rate = run.input().changes() / result.get("seconds") / 1000;
      boolean scaled = run.writer() == Writer.OURS_DV || run.writer() == Writer.PAIMON;
      if (run.input().workload() == Workload.UPSERTS
          && scaled
          && run.stateBackend().equals("hashmap")) {
        String size =
            SuiteReport.count(run.input().changes())
                + " changes / "
                + SuiteReport.count(run.input().keys())
                + " keys";
        scaling.addValue(rate, run.writer().label(), size);
      }
    }
    BufferedImage image = new BufferedImage(WIDTH, 2 * HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(
        RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    chart("Thousand changes per second, by workload (higher is better)", "workload", workloads)
        .draw(g, new Rectangle2D.Double(0, 0, WIDTH, HEIGHT));
    chart("Scaling of the in-order upserts: thousand changes per second", "input size", scaling)
        .draw(g, new Rectangle2D.Double(0, HEIGHT, WIDTH, HEIGHT));
    g.dispose();
    Files.createDirectories(png.toAbsolutePath().getParent());
    ImageIO.write(image, "png", png.toFile());
  }

  /** Ours in blues, Iceberg's sink in orange and grey, Paimon in green. */
  private static Color colorOf(String series) {
    if (series.endsWith(", rocksdb")) {
      return new Color(0x17becf);
    }
    for (Writer writer : Writer.values()) {
      if (series.equals(writer.label())) {
        return switch (writer) {
          case OURS_DV -> new Color(0x1f77b4);
          case OURS_POSITION -> new Color(0x6baed6);
          case OURS_EQUALITY -> new Color(0xaec7e8);
          case ICEBERG_UPSERT -> new Color(0xff7f0e);
          case ICEBERG_APPEND -> new Color(0x969696);
          case PAIMON -> new Color(0x2ca02c);
          case PLAIN -> Color.BLACK;
        };
      }
    }
    return Color.DARK_GRAY;
  }

  private static JFreeChart chart(String title, String axis, DefaultCategoryDataset data) {
    JFreeChart chart =
        ChartFactory.createBarChart(
            title, axis, "thousand changes/s", data, PlotOrientation.VERTICAL, true, false, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
    chart.getLegend().setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    CategoryAxis categories = plot.getDomainAxis();
    categories.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
    categories.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
    categories.setCategoryLabelPositions(CategoryLabelPositions.STANDARD);
    plot.getRangeAxis().setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    plot.getRangeAxis().setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
    BarRenderer bars = (BarRenderer) plot.getRenderer();
    bars.setBarPainter(new StandardBarPainter());
    bars.setShadowVisible(false);
    bars.setItemMargin(0.03);
    bars.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator("{2}", new DecimalFormat("0")));
    bars.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    bars.setDefaultItemLabelsVisible(true);
    for (int i = 0; i < data.getRowCount(); i++) {
      bars.setSeriesPaint(i, colorOf((String) data.getRowKey(i)));
    }
    return chart;
  }
}
